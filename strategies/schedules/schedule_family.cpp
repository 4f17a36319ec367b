#include "strategies/schedules/schedule_family.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {
namespace {

void post_validation_needs_zero_bubble(const Scenario& s, cost::Diagnostics& d) {
  if (!s.parallel.optimizer_post_validation) return;
  d.add("/parallel/optimizer_post_validation",
        fmt::format("optimizer post-validation applies to the zero-bubble schedules (zb-h1, "
                    "zb-h2, zb-1p, zb-2p, interleaved-zb, zb-v, dualpipev), not {}",
                    schedule_name(s.parallel.schedule)));
}

void asynchronous_optimizer_is_adamw(const Scenario& s, cost::Diagnostics& d) {
  if (s.optimizer.kind == OptimizerKind::kAdamW) return;
  d.add("/optimizer/name",
        fmt::format("{} steps each stage's optimizer on its own; parasim "
                    "models that with adamw (got {})",
                    schedule_name(s.parallel.schedule), optimizer_name(s.optimizer.kind)));
}

// Stage-local steps on replicated stages: each replica's stage all-reduces its gradients with
// the same stage of the others before its step (async_reduction.cpp); ZeRO-1 reduce-scatters
// them instead, each replica steps its shard, the weights are all-gathered back. ZeRO-2 and 3
// shard what a stage-local accumulation needs whole.
void asynchronous_unsharded(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  if (p.offload.enabled()) {
    d.add("/parallel/offload",
          fmt::format("{} steps each stage's optimizer on its own; parasim models that on the "
                      "GPU (got offload {}): leave parallel.offload out",
                      schedule_name(p.schedule), cost::offload_flavour_name(p.offload.flavour)));
  }
  if (p.zero_stage <= 1 && !p.fsdp2.enabled) return;
  d.add(p.fsdp2.enabled ? "/parallel/fsdp2" : "/parallel/zero_stage",
        fmt::format("{} accumulates whole gradients between stage-local optimizer steps; parasim "
                    "models it with zero_stage 0 or 1 and no FSDP2 (got zero_stage {}{})",
                    schedule_name(p.schedule), p.zero_stage, p.fsdp2.enabled ? ", fsdp2" : ""));
}

void chunks_need_several_chunk_schedule(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.chunks > 1) {
    d.add("/parallel/chunks",
          "chunks > 1 needs a schedule that runs several model chunks per "
          "stage: interleaved-1f1b, interleaved-zb, zb-v or dualpipev");
  }
}

// zb-v and dualpipev: the V of exactly two chunks per stage.
void two_chunks_in_a_v(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.chunks == kVShapeChunks) return;
  d.add("/parallel/chunks",
        fmt::format("{} places exactly {} model chunks per stage in a V (got chunks {}); leave "
                    "chunks out or set it to {}",
                    schedule_name(s.parallel.schedule), kVShapeChunks, s.parallel.chunks,
                    kVShapeChunks));
}

}  // namespace

ParameterSpec chunks_parameter() {
  ParameterSpec chunks;
  chunks.path = "/parallel/chunks";
  chunks.unit = "model chunks";
  chunks.default_value = "1; 2 for zb-v and dualpipev (compare: 2)";
  chunks.min = 1;
  chunks.max = 64;
  chunks.meaning = "v, model chunks per stage; pp x v must divide the layers";
  chunks.when_not_taken = chunks_need_several_chunk_schedule;
  return chunks;
}

std::vector<Rule> v_shape_rules() {
  return {two_chunks_in_a_v};
}

ParameterSpec post_validation_parameter(const std::string& default_value,
                                        const std::string& meaning) {
  ParameterSpec p;
  p.path = "/parallel/optimizer_post_validation";
  p.default_value = default_value;
  p.range_text = "true or false";
  p.meaning = meaning;
  p.when_not_taken = post_validation_needs_zero_bubble;
  return p;
}

std::vector<Rule> asynchronous_rules() {
  return {asynchronous_optimizer_is_adamw, asynchronous_unsharded};
}

std::optional<long long> whole_micro_batches(const Scenario& s) {
  const auto& t = s.training;
  const long long per_step = static_cast<long long>(t.micro_batch) * s.parallel.dp;
  if (t.global_batch <= 0 || per_step <= 0 || t.global_batch % per_step != 0) return std::nullopt;
  return t.global_batch / per_step;
}

int stages_on_every_stage(int stages, int, int micro_batches) {
  return std::min(micro_batches, stages);
}

double flush_pipeline_time(const StagePassTimes& t) {
  return t.sum_fbw + (t.micro_batches - 1) * t.max_fbw + t.hops;
}

double zb_h1_pipeline_time(const StagePassTimes& t) {
  return t.micro_batches * t.max_fbw + (t.stages - 1) * std::max(0.0, t.f + t.b - t.w) + t.hops;
}

double asynchronous_pipeline_time(const StagePassTimes& t) {
  return t.micro_batches * t.max_fbw;
}

}  // namespace parasim::strat
