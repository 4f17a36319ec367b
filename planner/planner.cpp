#include "planner/planner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "sim/engine.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::plan {
namespace {

using Clock = std::chrono::steady_clock;

bool better(const Screened& a, const Screened& b) {
  if (a.estimate.step_s != b.estimate.step_s) return a.estimate.step_s < b.estimate.step_s;
  return a.index < b.index;
}
bool lighter(const Screened& a, const Screened& b) {
  if (a.estimate.peak_bytes != b.estimate.peak_bytes) {
    return a.estimate.peak_bytes < b.estimate.peak_bytes;
  }
  return a.index < b.index;
}

// The n best of a list kept as a max-heap by `less`.
template <typename Less>
void push_bounded(std::vector<Screened>& heap, const Screened& s, std::size_t n, Less less) {
  if (n == 0) return;
  if (heap.size() < n) {
    heap.push_back(s);
    std::push_heap(heap.begin(), heap.end(), less);
  } else if (less(s, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), less);
    heap.back() = s;
    std::push_heap(heap.begin(), heap.end(), less);
  }
}

struct Accumulator {
  std::array<std::uint64_t, static_cast<std::size_t>(Reason::kCount)> counts{};
  std::uint64_t feasible = 0;
  std::vector<Screened> best, closest, kept;
};

constexpr std::uint64_t kBlock = 4096;
constexpr std::size_t kClosest = 5;

std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<std::size_t> order(x.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&x](std::size_t a, std::size_t b) {
    return x[a] != x[b] ? x[a] < x[b] : a < b;
  });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = (static_cast<double>(i + j) / 2.0) + 1;
    i = j + 1;
  }
  return r;
}

}  // namespace

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || a.size() != b.size()) return 1.0;
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ma += ra[i] / n;
    mb += rb[i] / n;
  }
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 1.0;
}

Simulated simulate_candidate(const strat::Scenario& base, const Screened& s,
                             const CostModels& costs, double limit_bytes) {
  return simulate_scenario(apply_candidate(base, s.candidate), s, costs, limit_bytes);
}

Simulated simulate_scenario(const strat::Scenario& sc, const Screened& s, const CostModels& costs,
                            double limit_bytes) {
  Simulated out;
  out.screened = s;
  cost::Diagnostics d(sc.source_file);
  strat::check_scenario(sc, d);
  if (!d.ok()) {
    out.why = d.problems().front().json_path + ": " + d.problems().front().message;
    return out;
  }
  try {
    const strat::BuiltWorkload built = strat::build_workload(sc, costs.at(s.candidate.gpus), {});
    const sim::SimResult result = sim::Engine(built.workload).run();
    out.report = strat::make_step_report(sc, built, result);
  } catch (const cost::InputError& e) {  // a work limit (workload_estimate.hpp)
    out.why = e.diagnostics().problems().empty() ? "over a work limit"
                                                 : e.diagnostics().problems().front().message;
    return out;
  }
  out.ran = true;
  for (const auto& m : out.report.memory) out.peak_bytes = std::max(out.peak_bytes, m.peak_bytes);
  out.fits = out.peak_bytes <= limit_bytes;
  out.screen_error = (s.estimate.step_s - out.report.step_time_s) / out.report.step_time_s;
  return out;
}

PlanResult run_plan(const strat::Scenario& base, const SearchSpace& space, const CostModels& costs,
                    const PlanOptions& o) {
  PlanResult res;
  res.space_size = space.size();
  res.hbm_bytes = costs.by_gpus.begin()->second->device().hbm_capacity.value;
  res.limit_bytes = res.hbm_bytes * (1.0 - o.headroom);
  const std::size_t best_n = static_cast<std::size_t>(std::max(o.top, o.max_simulate));
  const strat::PipelineSchedule first_schedule = space.schedules.front();
  const int threads = std::max(1, o.threads);
  const bool none_searched = std::find(space.recomputes.begin(), space.recomputes.end(),
                                       cost::Recompute::kNone) != space.recomputes.end();
  std::vector<Accumulator> acc(static_cast<std::size_t>(threads));
  std::atomic<std::uint64_t> next{0}, done{0};
  const std::uint64_t total = res.space_size;
  const auto t0 = Clock::now();
  std::mutex error_mutex;
  std::exception_ptr error;
  auto worker = [&](int id) {
    try {
      Accumulator& a = acc[static_cast<std::size_t>(id)];
      Screen screen(base, costs);
      for (;;) {
        const std::uint64_t begin = next.fetch_add(kBlock);
        if (begin >= total) break;
        const std::uint64_t end = std::min(total, begin + kBlock);
        for (std::uint64_t i = begin; i < end; ++i) {
          Screened s;
          s.index = i;
          s.candidate = space.decode(i);
          const Reason r = check_reason(base, s.candidate, first_schedule, space.max_staleness,
                                        none_searched);
          if (r != Reason::kOk) {
            ++a.counts[static_cast<std::size_t>(r)];
            continue;
          }
          s.estimate = screen.estimate(s.candidate);
          if (s.estimate.schedule_refused) {
            ++a.counts[static_cast<std::size_t>(Reason::kScheduleMemory)];
            continue;
          }
          if (s.estimate.peak_bytes > res.limit_bytes) {
            ++a.counts[static_cast<std::size_t>(Reason::kMemory)];
            push_bounded(a.closest, s, kClosest, lighter);
            continue;
          }
          ++a.feasible;
          push_bounded(a.best, s, best_n, better);
          if (o.keep_all) {
            if (o.keep == 0) a.kept.push_back(s);
            else push_bounded(a.kept, s, o.keep, better);
          }
        }
        const std::uint64_t d = done.fetch_add(end - begin) + (end - begin);
        if (id == 0 && o.progress) o.progress("screened", d, total);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(total);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  for (const Accumulator& a : acc) {
    for (std::size_t k = 0; k < a.counts.size(); ++k) res.rejects.counts[k] += a.counts[k];
    res.feasible += a.feasible;
    res.best.insert(res.best.end(), a.best.begin(), a.best.end());
    res.rejects.closest_memory.insert(res.rejects.closest_memory.end(), a.closest.begin(),
                                      a.closest.end());
    res.kept.insert(res.kept.end(), a.kept.begin(), a.kept.end());
  }
  std::sort(res.best.begin(), res.best.end(), better);
  if (res.best.size() > best_n) res.best.resize(best_n);
  std::sort(res.rejects.closest_memory.begin(), res.rejects.closest_memory.end(), lighter);
  if (res.rejects.closest_memory.size() > kClosest) res.rejects.closest_memory.resize(kClosest);
  std::sort(res.kept.begin(), res.kept.end(), better);
  if (o.keep > 0 && res.kept.size() > o.keep) res.kept.resize(o.keep);
  res.screen_seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  // The simulate tier.
  const auto t1 = Clock::now();
  std::vector<Screened> chosen;
  for (std::size_t i = 0; i < res.best.size(); ++i) {
    const bool near = res.best[i].estimate.step_s <= res.best.front().estimate.step_s * (1 + o.within);
    if ((static_cast<int>(i) < o.top || near) && static_cast<int>(chosen.size()) < o.max_simulate) {
      chosen.push_back(res.best[i]);
    }
  }
  res.simulated.resize(chosen.size());
  std::atomic<std::size_t> next_sim{0}, sims_done{0};
  auto sim_worker = [&](int id) {
    try {
      for (;;) {
        const std::size_t i = next_sim.fetch_add(1);
        if (i >= chosen.size()) break;
        res.simulated[i] = simulate_candidate(base, chosen[i], costs, res.limit_bytes);
        const std::size_t d = sims_done.fetch_add(1) + 1;
        if (id == 0 && o.progress) o.progress("simulated", d, chosen.size());
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next_sim.store(chosen.size());
    }
  };
  pool.clear();
  for (int t = 1; t < threads; ++t) pool.emplace_back(sim_worker, t);
  sim_worker(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  {
    const Candidate own = candidate_of(base);
    Screen screen(base, costs);
    Screened s;
    s.index = UINT64_MAX;
    s.candidate = own;
    s.estimate = screen.estimate(own);
    res.yours = simulate_scenario(base, s, costs, res.limit_bytes);  // its own stage_layers too
  }
  std::vector<double> est, simt;
  for (const Simulated& s : res.simulated) {
    if (!s.ran) continue;
    est.push_back(s.screened.estimate.step_s);
    simt.push_back(s.report.step_time_s);
    res.mean_abs_error += std::fabs(s.screen_error);
    res.max_abs_error = std::max(res.max_abs_error, std::fabs(s.screen_error));
  }
  if (!est.empty()) res.mean_abs_error /= static_cast<double>(est.size());
  res.spearman = spearman(est, simt);
  for (const Simulated& s : res.simulated) {
    if (s.ran && !s.fits) ++res.rejects.counts[static_cast<std::size_t>(Reason::kSimulatedMemory)];
    if (!s.ran) ++res.rejects.counts[static_cast<std::size_t>(Reason::kValidate)];
  }
  std::stable_sort(res.simulated.begin(), res.simulated.end(),
                   [](const Simulated& a, const Simulated& b) {
                     const bool ra = a.ran && a.fits, rb = b.ran && b.fits;
                     if (ra != rb) return ra;
                     if (ra && a.report.step_time_s != b.report.step_time_s) {
                       return a.report.step_time_s < b.report.step_time_s;
                     }
                     return a.screened.index < b.screened.index;
                   });
  for (const Simulated& s : res.simulated) res.ranked += s.ran && s.fits ? 1 : 0;
  res.simulate_seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  return res;
}

}  // namespace parasim::plan
