#include "strategies/schedules/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "strategies/registry/registry.hpp"
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/zero_bubble_search.hpp"

namespace parasim::strat {
namespace {

PipelineItem forward(int mb, int chunk = 0, std::uint8_t queue = 0) {
  return {ItemKind::kForward, mb, chunk, queue, 0};
}
PipelineItem backward(int mb, int chunk = 0, std::uint8_t queue = 0) {
  return {ItemKind::kBackward, mb, chunk, queue, 0};
}

void gpipe(const ScheduleShape& sh, StagePlan& plan) {
  for (int mb = 0; mb < sh.micro_batches; ++mb) plan.items.push_back(forward(mb));
  for (int mb = sh.micro_batches - 1; mb >= 0; --mb) plan.items.push_back(backward(mb));
}

void one_f_one_b(const ScheduleShape& sh, int stage, StagePlan& plan) {
  const int m = sh.micro_batches;
  const int warmup = std::min(sh.stages - stage - 1, m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) plan.items.push_back(forward(f));
  while (f < m) {
    plan.items.push_back(forward(f++));
    plan.items.push_back(backward(b++));
  }
  while (b < m) plan.items.push_back(backward(b++));
}

// Megatron-core's interleaved schedule (pipeline_parallel/schedules.py, get_schedule_table and
// get_pp_rank_microbatches): micro-batches in groups of G (microbatch_group, default P); within a
// group each chunk in turn runs the group's micro-batches (a last group takes the rest). The
// k-th forward runs table entry k, the k-th backward entry k with its chunk reversed. Warm-up:
// (P - s - 1) * 2 + (v - 1) * G forwards. With G = P and m a multiple of P this is Megatron-LM's
// original order: chunk (k / P) % v of micro-batch (k / (P v)) P + k % P.
void interleaved(const ScheduleShape& sh, int stage, StagePlan& plan) {
  const int p = sh.stages, v = sh.chunks, m = sh.micro_batches;
  const int g = sh.microbatch_group > 0 ? sh.microbatch_group : p;
  const int total = m * v;
  std::vector<std::pair<int, int>> table;  // (micro-batch, chunk)
  table.reserve(static_cast<std::size_t>(total));
  for (int first = 0; first < m; first += g) {
    const int end = first + g >= m ? m : first + g;
    for (int c = 0; c < v; ++c) {
      for (int mb = first; mb < end; ++mb) table.emplace_back(mb, c);
    }
  }
  auto fwd = [&](int k) { return forward(table[k].first, table[k].second); };
  auto bwd = [&](int k) { return backward(table[k].first, v - 1 - table[k].second); };
  const int warmup = std::min((p - stage - 1) * 2 + (v - 1) * g, total);
  int f = 0, b = 0;
  for (; f < warmup; ++f) plan.items.push_back(fwd(f));
  while (f < total) {
    plan.items.push_back(fwd(f++));
    plan.items.push_back(bwd(b++));
  }
  for (; b < total; ++b) plan.items.push_back(bwd(b));
}

// Zero-bubble handcrafted schedules (Qi et al. 2024, sec. 3): 1F1B's order of F and B, with
// stage s deferring up to s weight-gradient passes W (so the backward chain at the end of the
// step runs at t_B per stage, the deferred W filling what would be the cool-down bubble) and W
// run as soon as the deferral allows. ZB-H2 also runs P-1-s extra warm-up forwards, filling the
// warm-up bubble at the price of up to 2P-1 micro-batches in flight.
void zero_bubble(const ScheduleShape& sh, int stage, StagePlan& plan, bool h2) {
  const int p = sh.stages, m = sh.micro_batches;
  const int warmup = std::min(m, (h2 ? 2 : 1) * (p - 1 - stage));
  const int defer = (h2 ? 2 : 1) * stage;
  std::vector<int> pending;  // micro-batches whose W has not run
  std::size_t next_w = 0;
  auto run_w = [&](std::size_t keep) {
    while (pending.size() - next_w > keep) {
      plan.items.push_back({ItemKind::kWeightGrad, pending[next_w++], 0, 0, 0});
    }
  };
  int f = 0, b = 0;
  for (; f < warmup; ++f) plan.items.push_back(forward(f));
  while (f < m) {
    plan.items.push_back(forward(f++));
    plan.items.push_back(backward(b));
    pending.push_back(b++);
    run_w(static_cast<std::size_t>(defer));
  }
  while (b < m) {
    plan.items.push_back(backward(b));
    pending.push_back(b++);
    run_w(pending.size() - next_w > 1 ? pending.size() - next_w - 1 : 0);
  }
  run_w(0);
}

// Iterations back to back (post-validation): the first iteration's items repeated with the
// micro-batches of each further step, an optimizer item O closing every iteration.
void repeat_iterations(const ScheduleShape& sh, StagePlan& plan) {
  const std::vector<PipelineItem> one = plan.items;
  plan.items.clear();
  for (int step = 0; step < sh.steps; ++step) {
    for (PipelineItem item : one) {
      item.micro_batch += step * sh.micro_batches;
      plan.items.push_back(item);
    }
    plan.items.push_back({ItemKind::kOptimizer, -1, 0, 0, step + 1});
  }
}

// Backward (and the optimizer steps after every `per_update` of them) first, forwards gated at
// P - s in flight.
void asynchronous(const ScheduleShape& sh, int stage, StagePlan& plan) {
  const int per_update = backwards_per_update(sh);
  const int total = sh.micro_batches * sh.steps;
  int step = 0;
  for (int mb = 0; mb < total; ++mb) {
    plan.items.push_back(backward(mb, 0, 0));
    if ((mb + 1) % per_update == 0) plan.items.push_back({ItemKind::kOptimizer, -1, 0, 0, ++step});
    plan.items.push_back(forward(mb, 0, 1));
  }
  plan.gate_in_flight = sh.stages - stage;
  plan.gate_release = ItemKind::kBackward;
}

}  // namespace

// The entries' builders (strategies/schedules/schedule_*.cpp).
void gpipe_stage_order(const ScheduleShape& sh, int, const ZeroBubbleOrder*, StagePlan& plan) {
  gpipe(sh, plan);
}
void one_f_one_b_stage_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*,
                             StagePlan& plan) {
  one_f_one_b(sh, stage, plan);
}
void interleaved_stage_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*,
                             StagePlan& plan) {
  interleaved(sh, stage, plan);
}
void zb_h1_stage_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*,
                       StagePlan& plan) {
  zero_bubble(sh, stage, plan, false);
}
void zb_h2_stage_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*,
                       StagePlan& plan) {
  zero_bubble(sh, stage, plan, true);
}
void asynchronous_stage_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*,
                              StagePlan& plan) {
  asynchronous(sh, stage, plan);
}
void searched_stage_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder* searched,
                          StagePlan& plan) {
  if (searched == nullptr || stage >= static_cast<int>(searched->stages.size())) {
    throw std::invalid_argument(std::string(schedule_name(sh.schedule)) +
                                ": the searched order of every stage is required");
  }
  plan.items = searched->stages[static_cast<std::size_t>(stage)];
}

bool is_asynchronous(PipelineSchedule s) {
  return schedule_traits(s).asynchronous;
}

bool splits_weight_gradient(PipelineSchedule s) {
  return schedule_traits(s).splits_weight_gradient;
}

bool is_searched(PipelineSchedule s) {
  return schedule_traits(s).searched;
}

int searched_memory_multiple(PipelineSchedule s) {
  return schedule_traits(s).searched_memory_multiple;
}

bool post_validation(const ParallelSpec& p) {
  return splits_weight_gradient(p.schedule) &&
         p.optimizer_post_validation.value_or(is_searched(p.schedule));
}

AsyncSteps simulated_steps(const ParallelSpec& p, int micro_batches) {
  if (is_asynchronous(p.schedule)) return async_steps(p.schedule, p.pp, micro_batches);
  return post_validation(p) ? kPostValidationSteps : AsyncSteps{1, 0};
}

bool stashes_weights(PipelineSchedule s) {
  return schedule_traits(s).stashes_weights;
}

int backwards_per_update(const ScheduleShape& sh) {
  return sh.schedule == PipelineSchedule::kPipeDream ? 1 : sh.micro_batches;
}

AsyncSteps async_steps(PipelineSchedule s, int stages, int micro_batches) {
  if (!is_asynchronous(s)) return {1, 0};
  // Warm-up: enough global batches for the pipeline to fill (P micro-batches in flight) and for
  // every stage to have stepped once; then three measured steps.
  const int warmup = std::max(1, (2 * stages + micro_batches - 1) / micro_batches);
  return {warmup + 3, warmup};
}

StagePlan stage_plan(const ScheduleShape& sh, int stage, const ZeroBubbleOrder* searched) {
  StagePlan plan;
  schedule_traits(sh.schedule).order(sh, stage, searched, plan);
  if (!is_asynchronous(sh.schedule) && sh.steps > 1) repeat_iterations(sh, plan);
  return plan;
}

}  // namespace parasim::strat
