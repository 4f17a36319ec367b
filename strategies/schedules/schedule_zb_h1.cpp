// Zero bubble, handcrafted ZB-H1 (Qi et al. 2024, arXiv 2401.10241, sec. 3).
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {

Entry zb_h1_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "zb-h1";
  e.description =
      "zero bubble, handcrafted: backward split into input gradient B and weight "
      "gradient W; stage s defers up to s W passes into the cool-down; bubble "
      "(P-1)(tF+tB-tW), at most P micro-batches in flight";
  e.paper = "Qi et al. 2024, Zero Bubble Pipeline Parallelism, arXiv 2401.10241";
  e.parameters = {post_validation_parameter("false", "iterations overlap (see zb-1p)")};
  e.builder = "pipeline_schedule.cpp: zero_bubble (h2 false)";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kZbH1,
                            .order = zb_h1_stage_order,
                            .splits_weight_gradient = true,
                            .pipeline_time = zb_h1_pipeline_time};
  return e;
}

}  // namespace parasim::strat
