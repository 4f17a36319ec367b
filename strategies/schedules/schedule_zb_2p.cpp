// Zero bubble, automatic, memory limit 2p x M_B (Qi et al. 2024, arXiv 2401.10241, sec. 3.1, 4).
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// Near zero bubble once m >= 2P; with fewer micro-batches it runs as ZB-H1 (docs/schedules.md).
double zb_2p_pipeline_time(const StagePassTimes& t) {
  return t.micro_batches >= 2 * t.stages ? t.micro_batches * t.max_fbw + t.hops
                                         : zb_h1_pipeline_time(t);
}

}  // namespace

Entry zb_2p_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "zb-2p";
  e.description =
      "zero bubble, automatic, activations limited to 2p micro-batches: near zero "
      "bubble for m >= 2p";
  e.paper = "Qi et al. 2024, arXiv 2401.10241, sec. 3.1 and 4";
  e.parameters = {post_validation_parameter(
      "true", "false: a synchronisation before the step separates iterations")};
  e.builder = "zero_bubble_search.cpp: search_zero_bubble_order (zero_bubble_costs.cpp)";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kZb2p,
                            .order = searched_stage_order,
                            .splits_weight_gradient = true,
                            .searched = true,
                            .searched_memory_multiple = 2,
                            .pipeline_time = zb_2p_pipeline_time};
  return e;
}

}  // namespace parasim::strat
