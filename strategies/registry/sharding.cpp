// Data parallelism and ZeRO sharding (Rajbhandari et al. 2020, ZeRO, arXiv 1910.02054; DDP
// buckets: Li et al. 2020, PyTorch Distributed, arXiv 2006.15704).
#include <fmt/format.h>

#include "strategies/registry/kind_lists.hpp"

namespace parasim::strat {
namespace {

void megatron_ddp(const Scenario& s, cost::Diagnostics& d);

// ZeRO-3 gathers each layer's weights before its forward and backward; the builder emits those
// gathers for the flush schedules with one forward and one backward per micro-batch only.
void zero3_with_gpipe_or_1f1b(const Scenario& s, cost::Diagnostics& d) {
  const PipelineSchedule sc = s.parallel.schedule;
  if (sc != PipelineSchedule::kGpipe && sc != PipelineSchedule::kOneFOneB) {
    d.add("/parallel/zero_stage", fmt::format("zero_stage 3 is modelled with gpipe and 1f1b only "
                                              "(got {})",
                                              schedule_name(sc)));
  }
}

Entry stage(int zero_stage, const std::string& description, std::vector<Rule> rules) {
  Entry e;
  e.kind = EntryKind::kSharding;
  e.name = e.value = fmt::format("zero-{}", zero_stage);
  e.description = description;
  e.paper = zero_stage == 0 ? "Li et al. 2020, PyTorch Distributed, arXiv 2006.15704"
                            : "Rajbhandari et al. 2020, ZeRO, arXiv 1910.02054";
  e.rules = std::move(rules);
  e.builder = "data_parallel_emission.cpp (buckets, reduce-scatter, all-gathers, the step)";
  e.traits = ShardingTraits{.zero_stage = zero_stage};
  return e;
}

// FSDP2's rules (fsdp2_units.hpp): what parasim builds for it and what fully_shard accepts.
void fsdp2_layouts(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  const PipelineSchedule sc = p.schedule;
  if (sc != PipelineSchedule::kGpipe && sc != PipelineSchedule::kOneFOneB &&
      sc != PipelineSchedule::kInterleaved) {
    d.add("/parallel/sharding",
          fmt::format("fsdp2 is modelled with gpipe, 1f1b and interleaved-1f1b (got {}): the "
                      "split backward of zero-bubble schedules and the stage-local steps of "
                      "asynchronous ones are not built with FSDP2's units",
                      schedule_name(sc)));
  }
  if (s.model.moe.enabled()) {
    d.add("/parallel/sharding", "fsdp2 is not modelled with model.moe (torchtitan shards the "
                                "routed experts over their own expert data-parallel mesh); use "
                                "zero_stage 1 or 3");
  }
  if (p.tp_placement != TpPlacement::kMegatron) {
    d.add("/parallel/sharding", fmt::format("fsdp2 is modelled with the megatron placement (got "
                                            "{})",
                                            tp_placement_name(p.tp_placement)));
  }
  if (p.fsdp2.replicate < 1 || p.dp % p.fsdp2.replicate != 0) {
    d.add("/parallel/fsdp/replicate",
          fmt::format("HSDP's replicas ({}) must divide dp ({})", p.fsdp2.replicate, p.dp));
    return;
  }
  const int shard = p.fsdp2_shard();
  if (shard < 2) {
    d.add("/parallel/sharding",
          "fsdp2 needs a shard group of at least 2 ranks (dp / fsdp.replicate x cp is 1: nothing "
          "is sharded); use zero-0 for plain replicas, or fewer fsdp.replicate");
  }
  const auto& n = p.fsdp2.reshard_after_forward;
  if (n && *n != Fsdp2Spec::kShardGroup && shard % *n != 0) {
    d.add("/parallel/fsdp/reshard_after_forward",
          fmt::format("an integer reshard_after_forward ({}) must divide the shard group, dp / "
                      "replicate x cp = {} ranks (fully_shard's post-forward mesh)",
                      *n, shard));
  }
}

void fsdp_needs_fsdp2(const Scenario& s, cost::Diagnostics& d) {
  const Fsdp2Spec& f = s.parallel.fsdp2;
  if (!f.enabled && (f.reshard_after_forward || f.replicate != 1)) {
    d.add("/parallel/fsdp", "parallel.fsdp applies to \"sharding\": \"fsdp2\" only");
  }
}

Entry fsdp2() {
  Entry e;
  e.kind = EntryKind::kSharding;
  e.name = e.value = "fsdp2";
  e.description =
      "PyTorch FSDP2 (fully_shard) as torchtitan applies it: a unit per block plus the "
      "embedding and the norm with the head, fp32 shards, all-gathered in the training "
      "precision with the next unit prefetched, gradients reduce-scattered per unit in "
      "training.grad_precision (every "
      "micro-batch; once per step under pipelining), HSDP, cp folded into the shard group";
  e.paper = "Zhao et al. 2023, PyTorch FSDP, arXiv 2304.11277; torch.distributed.fsdp "
            "fully_shard (torch 2.15); torchtitan 0.3.0 apply_fsdp_to_decoder";
  ParameterSpec reshard;
  reshard.path = "/parallel/fsdp/reshard_after_forward";
  reshard.default_value = "\"default\" (torchtitan's policy)";
  reshard.range_text = "\"default\", true, false, or a whole number dividing the shard group";
  reshard.meaning = "after a unit's forward: free to the shard (true), keep whole (false), keep "
                    "a 1/N shard (N); default: true without pipelining, false with (torchtitan)";
  reshard.when_not_taken = fsdp_needs_fsdp2;
  ParameterSpec replicate;
  replicate.path = "/parallel/fsdp/replicate";
  replicate.unit = "GPUs";
  replicate.default_value = "1";
  replicate.min = 1;
  replicate.max = 1 << 20;
  replicate.meaning = "HSDP: dp = replicate x shard; gradients all-reduced over the replicas "
                      "after the shard group's reduce-scatter";
  replicate.when_not_taken = fsdp_needs_fsdp2;
  e.parameters = {reshard, replicate};
  e.rules = {fsdp2_layouts, megatron_ddp};
  e.builder = "fsdp2_emission.cpp (units' gathers, reshards, reductions), fsdp2_units.cpp";
  e.traits = ShardingTraits{.zero_stage = 3, .fsdp2 = true};
  return e;
}

// parallel.dp_bucket_layout "megatron" and overlap_param_gather (megatron_buckets.hpp): what
// parasim builds of megatron-core's DDP and what megatron/training/arguments.py (0.19.2) asserts.
void megatron_ddp(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  if (p.dp_bucket_layout == DpBucketLayout::kMegatron) {
    const std::string why = "dp_bucket_layout \"megatron\" is modelled ";
    if (p.fsdp2.enabled || p.zero_stage >= 2) {
      d.add("/parallel/dp_bucket_layout",
            why + "for zero_stage 0 (DDP) and 1 (--use-distributed-optimizer); Megatron's FSDP "
                  "and FSDP2 shard by their own units");
    }
    if (s.model.moe.enabled() || s.model.mtp_layers > 0) {
      d.add("/parallel/dp_bucket_layout",
            why + "for dense models without MTP modules (the experts' buffers are not laid out)");
    }
    if (p.chunks > 1) {
      d.add("/parallel/dp_bucket_layout",
            why + "without interleaving (Megatron disables bucketing for every model chunk but "
                  "the first, training.py; not built)");
    }
    if (p.schedule != PipelineSchedule::kGpipe && p.schedule != PipelineSchedule::kOneFOneB) {
      d.add("/parallel/dp_bucket_layout", why + "with the gpipe and 1f1b schedules");
    }
    if (s.training.fp8.enabled()) {
      d.add("/parallel/dp_bucket_layout",
            why + "in 16-bit training (FP8 parameters sit in a buffer of their own)");
    }
  }
  if (!p.overlap_param_gather) return;
  const std::string why = "overlap_param_gather (Megatron's --overlap-param-gather) needs ";
  if (p.zero_stage != 1 || p.fsdp2.enabled) {
    d.add("/parallel/overlap_param_gather",
          why + "the distributed optimizer: zero_stage 1 (arguments.py asserts "
                "--use-distributed-optimizer)");
  }
  if (s.training.framework.gradient_reduction != GradientReduction::kOverlapped) {
    d.add("/parallel/overlap_param_gather",
          why + "--overlap-grad-reduce: training.framework.gradient_reduction \"overlapped\" "
                "(arguments.py asserts it)");
  }
  if (p.dp_bucket_layout != DpBucketLayout::kMegatron) {
    d.add("/parallel/overlap_param_gather",
          why + "parallel.dp_bucket_layout \"megatron\" (its all-gathers follow Megatron's "
                "buckets)");
  }
  if (s.optimizer.kind != OptimizerKind::kAdamW) {
    d.add("/parallel/overlap_param_gather", why + "AdamW (the distributed optimizer's)");
  }
  if (p.optimizer_post_validation || p.offload.enabled()) {
    d.add("/parallel/overlap_param_gather",
          why + "one step per simulation without optimizer_post_validation or offload");
  }
}

}  // namespace

std::vector<Entry> sharding_entries() {
  return {stage(0, "plain data parallel: gradients all-reduced in buckets as the last "
                   "micro-batch's backward produces them, overlapped with the rest of the "
                   "backward; every replica holds all optimizer state",
                {megatron_ddp}),
          stage(1, "optimizer state sharded over dp (each rank steps 1/dp of the parameters): "
                   "gradients reduce-scattered, updated weights all-gathered",
                {megatron_ddp}),
          stage(2, "optimizer state and gradients sharded: the same reduce-scatter and "
                   "all-gather, each rank keeping only its gradient shard in memory",
                {megatron_ddp}),
          stage(3, "weights sharded too: all-gathered per layer before its forward and its "
                   "backward",
                {zero3_with_gpipe_or_1f1b, megatron_ddp}),
          fsdp2()};
}

}  // namespace parasim::strat
