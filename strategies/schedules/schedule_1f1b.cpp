// 1F1B with a flush (PipeDream-Flush; Narayanan et al. 2021, arXiv 2104.04473).
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {

Entry one_f_one_b_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "1f1b";
  e.description =
      "one forward, one backward, with a flush; same bubble as GPipe; stage s holds "
      "at most P-s activation sets";
  e.paper = "Narayanan et al. 2021, arXiv 2104.04473 (PipeDream-Flush, arXiv 2006.09503)";
  e.builder = "pipeline_schedule.cpp: one_f_one_b";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kOneFOneB,
                            .order = one_f_one_b_stage_order,
                            .pipeline_time = flush_pipeline_time};
  return e;
}

}  // namespace parasim::strat
