// Megatron-LM's interleaved 1F1B (Narayanan et al. 2021, arXiv 2104.04473, sec. 2.2).
#include <fmt/format.h>

#include <optional>
#include <string>

#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// The warm-up and cool-down shrink v-fold: m max (F+B) + (sum (F+B+W) - max (F+B)) / v + hops
// (Narayanan et al. 2021, arXiv 2104.04473, sec. 2.2).
double interleaved_pipeline_time(const StagePassTimes& t) {
  return t.micro_batches * t.max_fb + (t.sum_fbw - t.max_fb) / t.chunks + t.hops;
}

// Megatron's interleaved order advances in groups of G micro-batches (interleaved_group_problem).
void micro_batch_groups(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  const auto m = whole_micro_batches(s);
  if (!m) return;
  if (const auto problem = interleaved_group_problem(p.pp, *m, p.microbatch_group)) {
    d.add(p.microbatch_group > 0 ? "/parallel/microbatch_group" : "/training/global_batch",
          *problem);
  }
}

void group_needs_interleaved(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.microbatch_group > 0) {
    d.add("/parallel/microbatch_group",
          "microbatch_group applies to \"schedule\": \"interleaved-1f1b\" only");
  }
}

}  // namespace

std::optional<std::string> interleaved_group_problem(int pp, long long micro_batches, int group) {
  if (group <= 0) {
    if (micro_batches % pp == 0) return std::nullopt;
    return fmt::format(
        "interleaved-1f1b needs the micro-batch count ({}) to be a multiple of pp "
        "({}), or a microbatch_group that fits it",
        micro_batches, pp);
  }
  if (group < pp || group > micro_batches) {
    return fmt::format(
        "microbatch_group {} must lie between pp ({}) and the micro-batch count "
        "({}), as Megatron-core requires",
        group, pp, micro_batches);
  }
  const long long rest = micro_batches % group;
  if (rest > 0 && rest < pp) {
    return fmt::format(
        "the micro-batch count ({}) leaves a last group of {} (under pp, {}) with "
        "microbatch_group {}: make the remainder 0 or at least pp",
        micro_batches, rest, pp, group);
  }
  return std::nullopt;
}

Entry interleaved_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "interleaved-1f1b";
  e.description =
      "v model chunks per stage in Megatron's interleaved order; bubble (P-1)/(v m) "
      "of the ideal time, v times the point-to-point traffic; m a multiple of P, or "
      "micro-batches in groups of N per chunk (Llama 3's tunable interleaving)";
  e.paper =
      "Narayanan et al. 2021, arXiv 2104.04473; groups of N: Llama 3 2024, arXiv 2407.21783 "
      "sec. 3.3.2, and Megatron-core's microbatch_group_size_per_vp_stage";
  ParameterSpec group;
  group.path = "/parallel/microbatch_group";
  group.unit = "micro-batches";
  group.default_value = "pp";
  group.min = 1;
  group.max = 1 << 16;
  group.meaning =
      "micro-batches each chunk runs in a row (Megatron-core's "
      "--microbatch-group-size-per-virtual-pipeline-stage, Llama 3's N): from pp to "
      "the micro-batch count; larger holds (v - 1) x N forwards in the warm-up";
  group.when_not_taken = group_needs_interleaved;
  e.parameters = {chunks_parameter(), group};
  e.rules = {micro_batch_groups};
  e.builder = "pipeline_schedule.cpp: interleaved";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kInterleaved,
                            .order = interleaved_stage_order,
                            .pipeline_time = interleaved_pipeline_time};
  return e;
}

}  // namespace parasim::strat
