#pragma once
// parasim::strat schedule families — what several schedule entries share: the zero-bubble
// schedules' optimizer post-validation parameter (Qi et al. 2024, arXiv 2401.10241, sec. 4) and
// the asynchronous schedules' rules (stage-local optimizer steps: PipeDream, PipeDream-2BW,
// PACI), and the declarations of every schedule's order function (pipeline_schedule.cpp).
// Internal to strategies/schedules/ and strategies/registry/.

#include <optional>
#include <string>
#include <vector>

#include "strategies/registry/entry.hpp"

namespace parasim::strat {

// parallel.chunks, taken by every schedule that runs several model chunks per stage
// (interleaved-1f1b, interleaved-zb, zb-v, dualpipev); set with another, it is refused.
ParameterSpec chunks_parameter();
// The V-shaped schedules' rule (zb-v, dualpipev): exactly kVShapeChunks chunks per stage.
std::vector<Rule> v_shape_rules();

// parallel.optimizer_post_validation, defaulting to `default_value` ("true" or "false").
ParameterSpec post_validation_parameter(const std::string& default_value,
                                        const std::string& meaning);

// Rules of every asynchronous schedule: AdamW only, zero_stage 0 or 1 and no FSDP2 (any dp).
std::vector<Rule> asynchronous_rules();

// Interleaved 1F1B's micro-batch groups (Megatron-core, schedules.py): with `group` 0 (pp) the
// micro-batch count must be a multiple of pp; else pp <= group <= micro-batches and the last
// group is whole or at least pp. The problem in words, or none. Shared by the schedule's rule and
// the planner's.
std::optional<std::string> interleaved_group_problem(int pp, long long micro_batches, int group);

// interleaved-zb's micro-batch rounds (PyTorch: m / max(1, m / pp) per round must divide m): the
// problem in words, or none. Shared by the schedule's rule and the planner's.
std::optional<std::string> interleaved_zb_batch_problem(int pp, long long micro_batches);

// The micro-batches per pipeline and step when the batch splits into them (global_batch a
// positive multiple of micro_batch x dp), else none: a schedule's micro-batch rule has nothing
// to say then (the batch's own rule reports it).
std::optional<long long> whole_micro_batches(const Scenario& s);

// Activation sets of the schedules that hold P whole-stage micro-batches on every stage, the
// last included (zb-v; dualpipev's 2P+1 and interleaved-zb's (v-1) mpr + P chunk sets, floored
// to whole stages): min(m, P).
int stages_on_every_stage(int stages, int stage, int micro_batches);

// Closed forms several schedules share (StagePassTimes, entry.hpp):
// GPipe and 1F1B, sum_s (F+B+W) + (m - 1) max (F+B+W) + hops (Huang et al. 2019; Narayanan et al.
// 2021);
double flush_pipeline_time(const StagePassTimes& t);
// ZB-H1 (and ZB-1p, and ZB-H2/2p with m < 2P), m max (F+B+W) + (P - 1) max(0, F + B - W) + hops
// (Qi et al. 2024, arXiv 2401.10241, sec. 3);
double zb_h1_pipeline_time(const StagePassTimes& t);
// the asynchronous schedules' steady state, m max (F+B+W) (no flush).
double asynchronous_pipeline_time(const StagePassTimes& t);

// The item orders of the schedules (pipeline_schedule.cpp; zero_bubble_search.hpp for the
// searched ones), in StageOrder's signature.
void gpipe_stage_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                       StagePlan& plan);
void one_f_one_b_stage_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                             StagePlan& plan);
void interleaved_stage_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                             StagePlan& plan);
void zb_h1_stage_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                       StagePlan& plan);
void zb_h2_stage_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                       StagePlan& plan);
void searched_stage_order(const ScheduleShape& shape, int stage, const ZeroBubbleOrder* searched,
                          StagePlan& plan);
void asynchronous_stage_order(const ScheduleShape& shape, int stage,
                              const ZeroBubbleOrder* searched, StagePlan& plan);

}  // namespace parasim::strat
