// GPipe (Huang et al. 2019, arXiv 1811.06965): all forwards, then all backwards.
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// Every micro-batch's activations are held until the backwards start.
int all_micro_batches(int, int, int micro_batches) {
  return micro_batches;
}

}  // namespace

Entry gpipe_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "gpipe";
  e.description =
      "all forwards, then all backwards; bubble (P-1)/(m+P-1); m activation sets per "
      "stage";
  e.paper = "Huang et al. 2019, GPipe, arXiv 1811.06965";
  e.builder = "pipeline_schedule.cpp: gpipe";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kGpipe,
                            .order = gpipe_stage_order,
                            .pipeline_time = flush_pipeline_time,
                            .activation_sets = all_micro_batches};
  return e;
}

}  // namespace parasim::strat
