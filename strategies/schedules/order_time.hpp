#pragma once
// parasim::strat the time a schedule's own item order takes on a uniform pipeline: every stage
// runs a micro-batch's forward in f, its backward (input gradient, under a B/W split) in b and
// its weight gradient in w seconds, split evenly over its model chunks, and every transfer
// between two GPUs takes `hop` seconds (a V's turn on one GPU none). Items start in each stage's
// order as soon as their inputs are there (a list schedule of stage_plan's orders): the closed
// form of schedules whose bubble the papers give only for equal passes (zb-v, dualpipev,
// interleaved-zb; docs/schedules.md), exact for the order under these assumptions. Tested
// against the DualPipe README's bubble and memory formulas and the Zero Bubble paper's ZB-V
// claims (tests/strategies/v_schedules_test.cpp).

#include "strategies/registry/entry.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {

struct UniformPasses {
  double f = 0, b = 0, w = 0;  // seconds per micro-batch and stage, all chunks together
  double hop = 0;              // seconds per point-to-point transfer
};

// From the first item's start to the last item's end, one iteration (shape.steps is ignored).
// With more micro-batches than twice a = max(kOrderTimeExact / 2, 4P) (rounded up to a multiple
// of P) the order is timed at a and 2a micro-batches and extended linearly (its steady phase
// repeats per micro-batch). Throws std::logic_error if the order deadlocks (a bug in an order
// function).
double uniform_order_time(const ScheduleShape& shape, const UniformPasses& passes);
inline constexpr int kOrderTimeExact = 64;

// The planner screen's closed form from its per-stage times: uniform_order_time of `schedule`
// with the slowest stage's passes (t.f, t.b, t.w) on every stage and t.hops / (2 (P - 1)) per
// transfer.
double order_pipeline_time(PipelineSchedule schedule, const StagePassTimes& t);

// Peak count of chunk activation sets each stage holds at once under the same list schedule:
// forwards run whose weight gradient (or, without a split, backward) has not finished, in units
// of one chunk of one micro-batch. Index: stage.
std::vector<int> uniform_order_peak_chunks(const ScheduleShape& shape, const UniformPasses& passes);

}  // namespace parasim::strat
