// PipeDream: asynchronous 1F1B with weight stashing (Narayanan et al. 2019, arXiv 1806.03377).
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {

Entry pipedream_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "pipedream";
  e.description = "asynchronous 1F1B, no flush: backward first, forwards gated at P-s in flight, "
                  "an optimizer step after every backward, weight stashing (P-s versions on "
                  "stage s, P-s-1 updates crossed)";
  e.paper = "Narayanan et al. 2019, PipeDream, arXiv 1806.03377";
  e.rules = asynchronous_rules();
  e.builder = "pipeline_schedule.cpp: asynchronous (an O after every B)";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kPipeDream,
                            .order = asynchronous_stage_order,
                            .asynchronous = true,
                            .stashes_weights = true};
  return e;
}

}  // namespace parasim::strat
