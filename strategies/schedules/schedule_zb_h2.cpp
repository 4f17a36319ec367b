// Zero bubble, handcrafted ZB-H2 (Qi et al. 2024, arXiv 2401.10241, sec. 3).
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {

Entry zb_h2_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "zb-h2";
  e.description = "zero bubble with 2(P-1-s) warm-up forwards and up to 2s deferred W; bubble "
                  "(P-1)(tF+tB-2tW), at most 2P-1 micro-batches in flight";
  e.paper = "Qi et al. 2024, arXiv 2401.10241";
  e.parameters = {post_validation_parameter("false", "iterations overlap (see zb-1p)")};
  e.builder = "pipeline_schedule.cpp: zero_bubble (h2 true)";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kZbH2,
                            .order = zb_h2_stage_order,
                            .splits_weight_gradient = true};
  return e;
}

}  // namespace parasim::strat
