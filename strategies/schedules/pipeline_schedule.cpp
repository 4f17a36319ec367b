#include "strategies/schedules/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "strategies/schedules/schedule_orders.hpp"

namespace parasim::strat {
namespace {

// The order function of each schedule (schedule_orders.hpp; one file per schedule).
schedules::StageOrder stage_order(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::kGpipe: return schedules::gpipe_order;
    case PipelineSchedule::kOneFOneB: return schedules::one_f_one_b_order;
    case PipelineSchedule::kInterleaved: return schedules::interleaved_order;
    case PipelineSchedule::kZbH1: return schedules::zb_h1_order;
    case PipelineSchedule::kZbH2: return schedules::zb_h2_order;
    case PipelineSchedule::kPipeDream:
    case PipelineSchedule::kPipeDream2BW:
    case PipelineSchedule::kPaci: return schedules::asynchronous_order;
    case PipelineSchedule::kZb1p:
    case PipelineSchedule::kZb2p: return schedules::zb_searched_order;
  }
  throw std::invalid_argument("stage_plan: no order for schedule value " +
                              std::to_string(static_cast<int>(s)));
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

}  // namespace

bool is_asynchronous(PipelineSchedule s) {
  return s == PipelineSchedule::kPipeDream || s == PipelineSchedule::kPipeDream2BW ||
         s == PipelineSchedule::kPaci;
}

bool splits_weight_gradient(PipelineSchedule s) {
  return s == PipelineSchedule::kZbH1 || s == PipelineSchedule::kZbH2 || is_searched(s);
}

bool is_searched(PipelineSchedule s) {
  return s == PipelineSchedule::kZb1p || s == PipelineSchedule::kZb2p;
}

int searched_memory_multiple(PipelineSchedule s) {
  return s == PipelineSchedule::kZb1p ? 1 : s == PipelineSchedule::kZb2p ? 2 : 0;
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
  return s == PipelineSchedule::kPipeDream || s == PipelineSchedule::kPipeDream2BW;
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
  stage_order(sh.schedule)(sh, stage, searched, plan);
  if (!is_asynchronous(sh.schedule) && sh.steps > 1) repeat_iterations(sh, plan);
  return plan;
}

}  // namespace parasim::strat
