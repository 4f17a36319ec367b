#include "strategies/schedules/order_time.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "strategies/registry/registry.hpp"

namespace parasim::strat {
namespace {

struct Timed {
  double makespan = 0;
  std::vector<int> peak_chunks;
};

// The list schedule: each stage takes its next item once what it needs is done.
Timed list_schedule(const ScheduleShape& sh, const UniformPasses& t) {
  const int p = sh.stages, v = sh.chunks;
  const int last = p * v - 1;
  const bool split = splits_weight_gradient(sh.schedule);
  std::vector<StagePlan> plans;
  for (int s = 0; s < p; ++s) {
    ScheduleShape one = sh;
    one.steps = 1;
    plans.push_back(stage_plan(one, s));
  }
  auto vstage = [&](int stage, int chunk) {
    return virtual_stage_of(sh.schedule, p, stage, chunk);
  };
  auto stage_of = [&](int vs) { return stage_of_virtual_stage(sh.schedule, p, vs); };
  // Finish time per (kind, micro-batch, virtual stage); negative: not run yet.
  const auto m = static_cast<std::size_t>(sh.micro_batches);
  const auto vs_count = static_cast<std::size_t>(last + 1);
  std::vector<double> done(3 * m * vs_count, -1.0);
  auto at = [&](ItemKind k, int mb, int vs) -> double& {
    return done[(static_cast<std::size_t>(k) * m + static_cast<std::size_t>(mb)) * vs_count +
                static_cast<std::size_t>(vs)];
  };
  const double f = t.f / v, b = t.b / v, w = t.w / v;
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<double> free_at(static_cast<std::size_t>(p), 0.0);
  std::vector<int> live(static_cast<std::size_t>(p), 0);
  Timed out;
  out.peak_chunks.assign(static_cast<std::size_t>(p), 0);
  // Activation sets: +1 at a forward, -1 when its last backward-type item ends. Counted in item
  // order per stage (the order is the stage's own, so the count at each item is exact).
  std::size_t remaining = 0;
  for (const auto& plan : plans) remaining += plan.items.size();
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < p; ++s) {
      auto& plan = plans[static_cast<std::size_t>(s)];
      auto& i = next[static_cast<std::size_t>(s)];
      while (i < plan.items.size()) {
        const PipelineItem& item = plan.items[i];
        if (item.kind == ItemKind::kOptimizer) {
          ++i;
          --remaining;
          continue;
        }
        const int vs = vstage(s, item.chunk), mb = item.micro_batch;
        double ready = 0;
        auto need = [&](ItemKind k, int from_vs) {
          const double d = at(k, mb, from_vs);
          if (d < 0) return false;
          const double hop = stage_of(from_vs) == s ? 0.0 : t.hop;
          ready = std::max(ready, d + hop);
          return true;
        };
        bool ok = true;
        double length = 0;
        switch (item.kind) {
          case ItemKind::kForward:
            ok = vs == 0 || need(ItemKind::kForward, vs - 1);
            length = f;
            break;
          case ItemKind::kBackward:
            ok = need(ItemKind::kForward, vs) && (vs == last || need(ItemKind::kBackward, vs + 1));
            length = b;
            break;
          case ItemKind::kWeightGrad:
            ok = need(ItemKind::kBackward, vs);
            length = w;
            break;
          case ItemKind::kOptimizer:
            break;
        }
        if (!ok) break;
        const double start = std::max(ready, free_at[static_cast<std::size_t>(s)]);
        const double end = start + length;
        free_at[static_cast<std::size_t>(s)] = end;
        at(item.kind, mb, vs) = end;
        out.makespan = std::max(out.makespan, end);
        int& l = live[static_cast<std::size_t>(s)];
        if (item.kind == ItemKind::kForward) {
          ++l;
          out.peak_chunks[static_cast<std::size_t>(s)] =
              std::max(out.peak_chunks[static_cast<std::size_t>(s)], l);
        } else if (item.kind == (split ? ItemKind::kWeightGrad : ItemKind::kBackward)) {
          --l;
        }
        ++i;
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) {
      throw std::logic_error(std::string("uniform_order_time: the order of ") +
                             schedule_name(sh.schedule) + " deadlocks");
    }
  }
  return out;
}

}  // namespace

double uniform_order_time(const ScheduleShape& shape, const UniformPasses& passes) {
  // The planner's screen asks for the same pipelines many times: a per-thread memo.
  using Key = std::tuple<int, int, int, int, double, double, double, double>;
  thread_local std::map<Key, double> memo;
  const Key key{static_cast<int>(shape.schedule),
                shape.stages,
                shape.chunks,
                shape.micro_batches,
                passes.f,
                passes.b,
                passes.w,
                passes.hop};
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  // The steady phase repeats per micro-batch: beyond two counts in it (a multiple of P, at
  // least kOrderTimeExact / 2 and 4P), time both and extend linearly.
  const int p = shape.stages;
  const int a = (std::max(kOrderTimeExact / 2, 4 * p) + p - 1) / p * p;
  double time = 0;
  if (shape.micro_batches <= 2 * a) {
    time = list_schedule(shape, passes).makespan;
  } else {
    ScheduleShape lo = shape, hi = shape;
    lo.micro_batches = a;
    hi.micro_batches = 2 * a;
    const double t_lo = list_schedule(lo, passes).makespan;
    const double t_hi = list_schedule(hi, passes).makespan;
    time = t_hi + (t_hi - t_lo) / a * (shape.micro_batches - 2 * a);
  }
  if (memo.size() > 4096) memo.clear();
  memo.emplace(key, time);
  return time;
}

double order_pipeline_time(PipelineSchedule schedule, const StagePassTimes& t) {
  const ScheduleShape shape{schedule, t.stages, t.micro_batches, t.chunks};
  const double hop = t.stages > 1 ? t.hops / (2.0 * (t.stages - 1)) : 0.0;
  return uniform_order_time(shape, {t.f, t.b, t.w, hop});
}

std::vector<int> uniform_order_peak_chunks(const ScheduleShape& shape,
                                           const UniformPasses& passes) {
  return list_schedule(shape, passes).peak_chunks;
}

}  // namespace parasim::strat
