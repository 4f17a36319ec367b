// PipeDream: asynchronous 1F1B with weight stashing (Narayanan et al. 2019, arXiv 1806.03377).
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// Stage s runs P - 1 - s forwards ahead: the first stage's backward sees P - 1 updates.
int pipedream_staleness(int stages, int) {
  return stages - 1;
}

// One optimizer step per micro-batch.
int one_update_per_micro_batch(int micro_batches) {
  return micro_batches;
}

}  // namespace

Entry pipedream_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "pipedream";
  e.description =
      "asynchronous 1F1B, no flush: backward first, forwards gated at P-s in flight, "
      "an optimizer step after every backward, weight stashing (P-s versions on "
      "stage s, P-s-1 updates crossed)";
  e.paper = "Narayanan et al. 2019, PipeDream, arXiv 1806.03377";
  e.rules = asynchronous_rules();
  e.builder = "pipeline_schedule.cpp: asynchronous (an O after every B)";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kPipeDream,
                            .order = asynchronous_stage_order,
                            .asynchronous = true,
                            .stashes_weights = true,
                            .pipeline_time = asynchronous_pipeline_time,
                            .staleness = pipedream_staleness,
                            .updates = one_update_per_micro_batch};
  return e;
}

}  // namespace parasim::strat
