// PipeDream-2BW (Narayanan et al. 2021, Memory-Efficient Pipeline-Parallel DNN Training,
// arXiv 2006.09503).
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// Two weight versions: a backward is one update behind its forward (with more than one stage).
int double_buffered_staleness(int stages, int) {
  return stages > 1 ? 1 : 0;
}

}  // namespace

Entry pipedream_2bw_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "pipedream-2bw";
  e.description =
      "asynchronous, gradients coalesced over m micro-batches, two weight versions, "
      "delay one";
  e.paper =
      "Narayanan et al. 2021, Memory-Efficient Pipeline-Parallel DNN Training, arXiv "
      "2006.09503";
  e.rules = asynchronous_rules();
  e.builder = "pipeline_schedule.cpp: asynchronous (an O after every m B)";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kPipeDream2BW,
                            .order = asynchronous_stage_order,
                            .asynchronous = true,
                            .stashes_weights = true,
                            .pipeline_time = asynchronous_pipeline_time,
                            .staleness = double_buffered_staleness};
  return e;
}

}  // namespace parasim::strat
