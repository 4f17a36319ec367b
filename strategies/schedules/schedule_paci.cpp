// PACI (arXiv 2606.07881; DistPACI/Workers.py): asynchronous, no stashing.
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// One update per m micro-batches over a P - 1 deep pipeline: ceil((P - 1) / m) versions behind.
int paci_staleness(int stages, int micro_batches) {
  return micro_batches > 0 ? (stages - 1 + micro_batches - 1) / micro_batches : 0;
}

void paci_mode_needs_paci(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.paci_mode == PaciMode::kMem) {
    d.add("/parallel/paci_mode", "paci_mode applies to \"schedule\": \"paci\" only");
  }
}

}  // namespace

Entry paci_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "paci";
  e.description =
      "asynchronous, no flush and no stashing: backward first, forwards gated at P-s "
      "in flight, each stage steps its own optimizer after every a = m local "
      "backwards; at most ceil((P-s-1)/a) updates crossed per micro-batch";
  e.paper = "PACI 2026, arXiv 2606.07881 (DistPACI/Workers.py)";
  ParameterSpec mode;
  mode.path = "/parallel/paci_mode";
  mode.default_value = "perf";
  mode.choices = {"perf", "mem"};
  mode.meaning =
      "perf keeps activations; mem keeps only the stage input and recomputes the "
      "stage forward inside the backward";
  mode.when_not_taken = paci_mode_needs_paci;
  e.parameters = {mode};
  e.rules = asynchronous_rules();
  e.builder = "pipeline_schedule.cpp: asynchronous (an O after every a = m B)";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kPaci,
                            .order = asynchronous_stage_order,
                            .asynchronous = true,
                            .pipeline_time = asynchronous_pipeline_time,
                            .staleness = paci_staleness};
  return e;
}

}  // namespace parasim::strat
