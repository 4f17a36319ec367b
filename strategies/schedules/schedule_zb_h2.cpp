// Zero bubble, handcrafted ZB-H2 (Qi et al. 2024, arXiv 2401.10241, sec. 3).
#include <algorithm>

#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// Its 2(P - 1 - s) warm-up forwards need m >= 2P; with fewer it runs as ZB-H1
// (docs/schedules.md).
double zb_h2_pipeline_time(const StagePassTimes& t) {
  return t.micro_batches >= 2 * t.stages
             ? t.micro_batches * t.max_fbw + (t.stages - 1) * std::max(0.0, t.f + t.b - 2 * t.w) +
                   t.hops
             : zb_h1_pipeline_time(t);
}

// Up to 2(P - s) - 1 micro-batches in flight on stage s.
int zb_h2_activation_sets(int stages, int stage, int micro_batches) {
  return std::min(micro_batches, 2 * (stages - stage) - 1);
}

}  // namespace

Entry zb_h2_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "zb-h2";
  e.description =
      "zero bubble with 2(P-1-s) warm-up forwards and up to 2s deferred W; bubble "
      "(P-1)(tF+tB-2tW), at most 2P-1 micro-batches in flight";
  e.paper = "Qi et al. 2024, arXiv 2401.10241";
  e.parameters = {post_validation_parameter("false", "iterations overlap (see zb-1p)")};
  e.builder = "pipeline_schedule.cpp: zero_bubble (h2 true)";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kZbH2,
                            .order = zb_h2_stage_order,
                            .splits_weight_gradient = true,
                            .pipeline_time = zb_h2_pipeline_time,
                            .activation_sets = zb_h2_activation_sets};
  return e;
}

}  // namespace parasim::strat
