// Zero bubble, automatic, memory limit p x M_B (Qi et al. 2024, arXiv 2401.10241, sec. 3.1, 4).
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {

Entry zb_1p_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "zb-1p";
  e.description =
      "zero bubble, automatic: each stage's F/B/W order searched by the paper's "
      "heuristic on the simulated stage and transfer times, activations limited to p "
      "micro-batches (1F1B's memory); with post-validation the next iteration starts "
      "on a stage right after its optimizer step";
  e.paper = "Qi et al. 2024, arXiv 2401.10241, sec. 3.1 and 4";
  e.parameters = {post_validation_parameter(
      "true", "false: a synchronisation before the step separates iterations")};
  e.builder = "zero_bubble_search.cpp: search_zero_bubble_order (zero_bubble_costs.cpp)";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kZb1p,
                            .order = searched_stage_order,
                            .splits_weight_gradient = true,
                            .searched = true,
                            .searched_memory_multiple = 1,
                            .pipeline_time = zb_h1_pipeline_time};
  return e;
}

}  // namespace parasim::strat
