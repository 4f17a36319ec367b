#pragma once
// parasim::strat schedule orders (internal to strategies/schedules/) — one function per pipeline
// schedule, each in its own file, all behind one interface: the items `stage` runs, appended to
// `plan` in queue order (flush schedules: one iteration, repeated by stage_plan for
// post-validation; asynchronous schedules: every simulated step), with the forward gate when
// the schedule has one. `searched` is the zero-bubble search's order (zb-1p, zb-2p only; the
// others ignore it). The schedules, their papers and bubbles: pipeline_schedule.hpp.

#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat::schedules {

using StageOrder = void (*)(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                            StagePlan& plan);

inline PipelineItem forward(int mb, int chunk = 0, std::uint8_t queue = 0) {
  return {ItemKind::kForward, mb, chunk, queue, 0};
}
inline PipelineItem backward(int mb, int chunk = 0, std::uint8_t queue = 0) {
  return {ItemKind::kBackward, mb, chunk, queue, 0};
}

void gpipe_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                 StagePlan& plan);                                           // gpipe.cpp
void one_f_one_b_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                       StagePlan& plan);                                     // one_f_one_b.cpp
void interleaved_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                       StagePlan& plan);                                     // interleaved.cpp
void zb_h1_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                 StagePlan& plan);                                           // zero_bubble_handcrafted.cpp
void zb_h2_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                 StagePlan& plan);                                           // zero_bubble_handcrafted.cpp
void zb_searched_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                       StagePlan& plan);                                     // zero_bubble_searched.cpp
// pipedream, pipedream-2bw and paci: one order, the optimizer step's period from the shape.
void asynchronous_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                        StagePlan& plan);                                    // asynchronous.cpp

}  // namespace parasim::strat::schedules
