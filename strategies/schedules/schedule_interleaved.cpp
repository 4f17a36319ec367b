// Megatron-LM's interleaved 1F1B (Narayanan et al. 2021, arXiv 2104.04473, sec. 2.2).
#include <fmt/format.h>

#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// The warm-up and cool-down shrink v-fold: m max (F+B) + (sum (F+B+W) - max (F+B)) / v + hops
// (Narayanan et al. 2021, arXiv 2104.04473, sec. 2.2).
double interleaved_pipeline_time(const StagePassTimes& t) {
  return t.micro_batches * t.max_fb + (t.sum_fbw - t.max_fb) / t.chunks + t.hops;
}

void chunks_need_interleaved(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.chunks > 1) {
    d.add("/parallel/chunks", "chunks > 1 needs \"schedule\": \"interleaved-1f1b\"");
  }
}

// Megatron's interleaved order advances in rounds of P micro-batches.
void micro_batches_multiple_of_pp(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  const auto& t = s.training;
  if (t.global_batch > 0 && t.global_batch % (static_cast<long long>(t.micro_batch) * p.dp) == 0 &&
      (t.global_batch / (t.micro_batch * p.dp)) % p.pp != 0) {
    d.add("/training/global_batch",
          fmt::format("interleaved-1f1b needs the micro-batch count ({}) to be a multiple of pp "
                      "({})",
                      t.global_batch / (t.micro_batch * p.dp), p.pp));
  }
}

}  // namespace

Entry interleaved_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "interleaved-1f1b";
  e.description = "v model chunks per stage in Megatron's interleaved order; bubble (P-1)/(v m) "
                  "of the ideal time, v times the point-to-point traffic; m a multiple of P";
  e.paper = "Narayanan et al. 2021, arXiv 2104.04473";
  ParameterSpec chunks;
  chunks.path = "/parallel/chunks";
  chunks.unit = "model chunks";
  chunks.default_value = "1 (compare: 2)";
  chunks.min = 1;
  chunks.max = 64;
  chunks.meaning = "v; pp x v must divide the layers";
  chunks.when_not_taken = chunks_need_interleaved;
  e.parameters = {chunks};
  e.rules = {micro_batches_multiple_of_pp};
  e.builder = "pipeline_schedule.cpp: interleaved";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kInterleaved,
                            .order = interleaved_stage_order,
                            .pipeline_time = interleaved_pipeline_time};
  return e;
}

}  // namespace parasim::strat
