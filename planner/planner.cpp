#include "planner/planner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "planner/trainer_filter.hpp"
#include "sim/engine.hpp"
#include "sim/worker_threads.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::plan {
namespace {

using Clock = std::chrono::steady_clock;

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
  for (const auto& m : out.report.memory) out.peak_bytes = std::max(out.peak_bytes, m.device_bytes);
  out.fits = out.peak_bytes <= limit_bytes;
  out.screen_error = (s.estimate.step_s - out.report.step_time_s) / out.report.step_time_s;
  return out;
}

namespace {

// The screen over this share's blocks, on the options' threads; the tally finished.
ScreenTally screen_share(const strat::Scenario& base, const SearchSpace& space,
                         const CostModels& costs, const PlanOptions& o, const SpaceShare& share,
                         const TallyBounds& bounds, double limit_bytes) {
  const SpaceFacts facts = space_facts(space);
  const int threads = std::max(1, o.threads);
  const std::uint64_t total = space.size();
  const std::uint64_t blocks = SpaceShare::blocks(total);
  const std::uint64_t share_total = share.candidates_of_share(total);
  std::vector<ScreenTally> tallies(static_cast<std::size_t>(threads));
  std::atomic<std::uint64_t> next{0}, done{0};
  std::mutex error_mutex;
  std::exception_ptr error;
  auto worker = [&](int id) {
    try {
      ScreenTally& a = tallies[static_cast<std::size_t>(id)];
      Screen screen(base, costs);
      std::optional<TrainerFilter> trainer;
      if (o.trainer) trainer.emplace(base, *o.trainer);
      for (;;) {
        const std::uint64_t block = share.block(next.fetch_add(1));
        if (block >= blocks) break;
        const std::uint64_t begin = block * kShareBlock;
        const std::uint64_t end = std::min(total, begin + kShareBlock);
        for (std::uint64_t i = begin; i < end; ++i) {
          Screened s;
          s.index = i;
          s.candidate = space.decode(i);
          Reason r = check_reason(base, s.candidate, facts);
          if (r == Reason::kOk && trainer && !trainer->accepts(s.candidate)) r = Reason::kTrainer;
          if (r != Reason::kOk) {
            ++a.counts[static_cast<std::size_t>(r)];
            continue;
          }
          s.estimate = screen.estimate(s.candidate);
          if (s.estimate.schedule_refused) {
            ++a.counts[static_cast<std::size_t>(Reason::kScheduleMemory)];
          } else if (s.estimate.peak_bytes > limit_bytes) {
            a.add_memory_reject(s, bounds);
          } else {
            a.add_feasible(s, bounds);
          }
        }
        const std::uint64_t d = done.fetch_add(end - begin) + (end - begin);
        if (id == 0 && o.progress) o.progress("screened", d, share_total);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next.store(blocks);  // past every share's last block
    }
  };
  sim::run_workers(threads, worker);
  if (error) std::rethrow_exception(error);
  ScreenTally tally;
  for (const ScreenTally& a : tallies) tally.merge(a);
  tally.finish(bounds);
  return tally;
}

// Several ranks: each sends its tally to rank 0 (a failure as its message, so rank 0 never waits
// for a rank that stopped), which merges them. Rank 0 gets the whole space's tally; the others,
// nothing. A rank's own exception is rethrown after the exchange.
std::optional<ScreenTally> gather_tallies(const SpaceShare& share, const TallyBounds& bounds,
                                          const std::function<ScreenTally()>& screen) {
  ScreenTally mine;
  std::exception_ptr own_error;
  try {
    mine = screen();
  } catch (const std::exception& e) {
    own_error = std::current_exception();
    mine = ScreenTally{};
    mine.error = e.what();
  }
  const std::vector<std::string> all = share.gather(encode(mine));
  if (own_error) std::rethrow_exception(own_error);
  if (share.rank != 0) return std::nullopt;
  if (all.size() != static_cast<std::size_t>(share.size)) {
    throw std::runtime_error("the ranks' gather returned " + std::to_string(all.size()) +
                             " tallies for " + std::to_string(share.size) + " ranks");
  }
  ScreenTally tally = std::move(mine);
  for (std::size_t r = 1; r < all.size(); ++r) {
    const ScreenTally other = decode_tally(all[r]);
    if (!other.error.empty()) {
      throw std::runtime_error("rank " + std::to_string(r) + " failed: " + other.error);
    }
    tally.merge(other);
  }
  tally.finish(bounds);
  return tally;
}

}  // namespace

PlanResult run_plan(const strat::Scenario& base, const SearchSpace& space, const CostModels& costs,
                    const PlanOptions& o) {
  return *run_plan_shared(base, space, costs, o, SpaceShare{});
}

std::optional<PlanResult> run_plan_shared(const strat::Scenario& base, const SearchSpace& space,
                                          const CostModels& costs, const PlanOptions& o,
                                          const SpaceShare& share) {
  if (share.size < 1 || share.rank < 0 || share.rank >= share.size ||
      (share.size > 1 && !share.gather)) {
    throw std::invalid_argument("a space share needs 0 <= rank < size and, for several, a gather");
  }
  PlanResult res;
  res.space_size = space.size();
  res.hbm_bytes = costs.by_gpus.begin()->second->device().hbm_capacity.value;
  res.limit_bytes = res.hbm_bytes * (1.0 - o.headroom);
  TallyBounds bounds;
  bounds.best = static_cast<std::size_t>(std::max(o.top, o.max_simulate));
  bounds.closest = kClosest;
  bounds.keep_all = o.keep_all;
  bounds.keep = o.keep;
  const auto t0 = Clock::now();
  auto screen_mine = [&]() {
    return screen_share(base, space, costs, o, share, bounds, res.limit_bytes);
  };
  std::optional<ScreenTally> tally;
  if (share.size == 1) {
    tally = screen_mine();
  } else {
    tally = gather_tallies(share, bounds, screen_mine);
    if (!tally) return std::nullopt;
  }
  res.rejects.counts = tally->counts;
  res.feasible = tally->feasible;
  res.best = std::move(tally->best);
  res.rejects.closest_memory = std::move(tally->closest);
  res.kept = std::move(tally->kept);
  res.screen_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const int threads = std::max(1, o.simulate_threads > 0 ? o.simulate_threads : o.threads);
  std::mutex error_mutex;
  std::exception_ptr error;

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
  sim::run_workers(threads, sim_worker);
  if (error) std::rethrow_exception(error);
  if (o.yours) {
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
