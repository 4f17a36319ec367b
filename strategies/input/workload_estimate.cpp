#include "strategies/input/workload_estimate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "costmodel/cost_model.hpp"
#include "costmodel/units.hpp"
#include "strategies/data_parallel/fsdp2_units.hpp"
#include "strategies/data_parallel/megatron_buckets.hpp"
#include "strategies/data_parallel/zero3_gather_units.hpp"
#include "strategies/framework/host_plan.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/optimizers/optimizer_shampoo.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {
namespace {

// Memory coefficients: maximum resident set size (/usr/bin/time -v) less the 268 MB of a plain
// `parasim validate`, on a 2-core AMD EPYC VM (gcc 12, -O3), divided out:
//   per op      Llama 2 7B with 4096 layers x 512 micro-batches, symmetric (16.8 million ops,
//               3.82 GB: 227 B per op, vectors reallocated past the builder's 16 million op
//               reserve included); GPT-3 175B on 1024 GPUs --full takes less (5.0 million ops,
//               628 MB: 125 B), so 230 stays an upper bound for both;
//   per device  a 1-layer model of hidden 64 on 65,536 and 262,144 GPUs --full (245 MB with
//               0.66 million ops, 1.22 GB with 2.6 million: 2.4 to 3.7 KB per simulated GPU
//               beyond its ops; streams, links, names, memory accounts, the engine's state);
//   per block   Shampoo with block 16 on Llama 2 7B (6.6 million blocks in the largest stage,
//               1.56 GB: 236 B per block; the block list, the load-balance map, the ranks'
//               lists of the stage being costed).
constexpr double kBytesPerOp = 230;
constexpr double kBytesPerDevice = 3000;
constexpr double kBytesPerBlock = 300;

double steps_of(const std::vector<LayerStep>& steps) {
  return static_cast<double>(steps.size());
}

// Steps after which the framework's host syncs (each splits the host op once).
double syncs_of(const std::vector<LayerStep>& steps) {
  double n = 0;
  for (const auto& s : steps) n += s.syncs_after > 0 ? 1 : 0;
  return n;
}

}  // namespace

WorkloadEstimate estimate_workload(const Scenario& sc, bool full) {
  WorkloadEstimate e;
  const auto& p = sc.parallel;
  const int pp = p.pp, chunks = p.chunks;
  const double per_stage = full ? static_cast<double>(sc.replicas()) * p.tp : 1.0;
  e.devices = per_stage * pp;

  // Step counts of the layer programs (their times do not matter here).
  const cost::CostModel costs(sc.cluster);
  // With experts, an MoE layer's (it has every step a dense layer has, and the experts' more).
  const LayerProgram layer = transformer_layer_program(
      sc, costs, sc.model.moe.enabled() ? LayerKind::kMoe : LayerKind::kDense);
  const LayerProgram embed = embedding_program(sc, costs);
  const LayerProgram head = head_program(sc, costs);
  const bool split = splits_weight_gradient(p.schedule);
  const bool async = is_asynchronous(p.schedule);
  const bool zero3 = p.zero_stage == 3;
  // Ops a sharded unit adds per pass and micro-batch: ZeRO-3's gather (and its reduce-scatter in
  // the backward); FSDP2's (fsdp2_emission.cpp) copy-in, all-gather and copy-out where the unit
  // is not whole, and its reduction: without pipelining the reduce-scatter's copy-in, the
  // reduce-scatter, HSDP's all-reduce and the accumulation every micro-batch; with pipelining the
  // unsharded accumulation every micro-batch, the reduction once a step (spread here over the
  // micro-batches); a unit kept whole after its forward under pipelining is gathered once a step.
  const double m = std::max(1, sc.micro_batches());
  const bool every = fsdp2_reduces_every_micro_batch(sc);
  const double all_reduce = p.fsdp2.replicate > 1 ? 1 : 0;
  // Under 1F1B a forward after a backward finds its unit whole (no resharding after backward):
  // only stage s's min(m, pp - s) warm-up forwards gather; GPipe's and interleaving's (bounded)
  // every forward.
  // Parameter offload adds a copy to each gather from the full shard (ZeRO-Infinity: every
  // gather of each of ZeRO-3's units; FSDP2: a post-forward shard's gather has none) and, under
  // FSDP2, one to each reduction (offload_emission.cpp, fsdp2_emission.cpp).
  const bool fsdp2_offload = p.offload.flavour == cost::OffloadFlavour::kFsdp2;
  const Zero3Gathering& z3 = sc.training.framework.zero3;
  const double z3_gathers =
      zero3 && !p.fsdp2.enabled
          ? static_cast<double>(zero3_gather_units(sc.model, p.tp, z3).size()) *
                (p.offload.params ? 2 : 1)
          : 0;
  const double z3_backward_gathers =
      z3_gathers * zero3_backward_gathers(z3, sc.training.recompute == cost::Recompute::kFull);
  const double z3_reduces = zero3 && !p.fsdp2.enabled
                                ? static_cast<double>(zero3_reduce_calls(sc.model, p.tp, z3).size())
                                : 0;
  auto fsdp2_ops = [&](Fsdp2UnitKind kind, bool backward, int stage) -> double {
    if (!p.fsdp2.enabled) {
      return zero3 ? (backward ? z3_backward_gathers + z3_reduces : z3_gathers) : 0;
    }
    const int after = fsdp2_post_forward_ranks(sc, kind);
    const bool whole_after_forward = after == 1;
    const double from_shard = fsdp2_offload ? 4 : 3;
    const double reduce_copy = fsdp2_offload ? 1 : 0;
    if (!backward) {
      if (every) return from_shard;
      if (whole_after_forward) return from_shard / m;
      const double warm = p.schedule == PipelineSchedule::kOneFOneB
                              ? std::min(m, static_cast<double>(pp - stage))
                              : m;
      return from_shard * warm / m;
    }
    const double gather = whole_after_forward ? 0 : after == p.fsdp2_shard() ? from_shard : 3;
    return gather + (every ? 2 + all_reduce + reduce_copy + (m - 1) / m
                           : 1 + (2 + all_reduce + reduce_copy) / m);
  };
  const bool paci_mem = p.schedule == PipelineSchedule::kPaci && p.paci_mode == PaciMode::kMem;
  const AsyncSteps steps = simulated_steps(p, sc.micro_batches());
  const double total_mb = static_cast<double>(sc.micro_batches()) * steps.total;
  const int last = pp * chunks - 1;

  // Per simulated device of each stage, as the builder emits them (pipeline_emission.cpp,
  // data_parallel_emission.cpp): per micro-batch and chunk its F, B and W items, the pipeline
  // transfers it sends and receives; per step its optimizer and data-parallel ops.
  for (int s = 0; s < pp; ++s) {
    double per_device = 0;
    for (int c = 0; c < chunks; ++c) {
      const int v = sc.virtual_stage(s, c);
      const int lc = sc.virtual_stage_layers(v);
      double f = lc * (steps_of(layer.forward) + fsdp2_ops(Fsdp2UnitKind::kBlock, false, s));
      if (v == 0 && p.fsdp2.enabled) f += fsdp2_ops(Fsdp2UnitKind::kEmbedding, false, s);
      if (v == last && p.fsdp2.enabled) f += fsdp2_ops(Fsdp2UnitKind::kHead, false, s);
      if (v == 0) f += steps_of(embed.forward);
      if (v == last) f += steps_of(head.forward);
      if (lc == 0) f += 1;  // Megatron's no-op layer (one clone kernel)
      double b = lc * (steps_of(split ? layer.backward_input : layer.backward) +
                       fsdp2_ops(Fsdp2UnitKind::kBlock, true, s) +
                       (paci_mem ? steps_of(layer.forward) : 0));
      if (v == 0) b += steps_of(split ? embed.backward_input : embed.backward);
      if (v == last) b += steps_of(split ? head.backward_input : head.backward);
      if (v == 0 && p.fsdp2.enabled) b += fsdp2_ops(Fsdp2UnitKind::kEmbedding, true, s);
      if (v == last && p.fsdp2.enabled) b += fsdp2_ops(Fsdp2UnitKind::kHead, true, s);
      double w = 0;
      if (split) {
        w = lc * steps_of(layer.weight_grad);
        if (v == 0) w += steps_of(embed.weight_grad);
        if (v == last) w += steps_of(head.weight_grad);
        w = std::max(w, 1.0);  // a pass with no kernel still gets one op (its "empty pass")
      }
      // A V's turn (virtual stages P - 1 and P on one GPU) transfers nothing.
      const bool from_before = v > 0 && sc.stage_of_virtual_stage(v - 1) != s;
      const bool to_after = v < last && sc.stage_of_virtual_stage(v + 1) != s;
      const double transfers = (from_before ? 2 : 0) + (to_after ? 2 : 0);
      // Host ops (strategies/workload/host_emission.cpp): one per item, one more after every sync
      // point (the layer's, the item's start and end, its receive); an asynchronous schedule's
      // syncs do not split its host ops (pipeline_emission.cpp, host_syncs_wait_).
      const auto& fc = sc.training.framework.counts;
      const bool batch_syncs = fc.forward_start_syncs > 0 &&
                               loads_batch(sc.training.framework, v, last, sc.head_stage() == 0);
      const double item_syncs = async ? 0.0
                                      : batch_syncs + (fc.forward_end_syncs > 0) +
                                            (fc.backward_start_syncs > 0) +
                                            (fc.backward_end_syncs > 0) + 2.0 * (fc.p2p_syncs > 0);
      const double layer_syncs =
          async ? 0.0
                : lc * (syncs_of(layer.forward) +
                        syncs_of(split ? layer.backward_input : layer.backward));
      const double host = (split ? 3 : 2) + item_syncs + layer_syncs;
      const double accumulate = lc * steps_of(layer.grad_accumulation);
      per_device += total_mb * (f + b + w + transfers + host + accumulate);
    }
    const auto& fc = sc.training.framework.counts;
    // The step's host ops: one, and one more after its syncs; with parameter offload the CPU
    // step's own, and ZeRO-Infinity's gradient copies (two per micro-batch, one more at the
    // boundary: offload_emission.cpp).
    const double step_host = 1.0 + (fc.step_syncs + fc.fp16_step_syncs_per_tensor > 0 ? 1 : 0) +
                             (fsdp2_offload || p.offload.params ? 1 : 0) +
                             (p.offload.params ? 2 * m + 1 : 0);
    if (async) {
      ScheduleShape shape{p.schedule, pp,          sc.micro_batches(),
                          chunks,     steps.total, p.microbatch_group};
      // With replicas, each stage-local step's reduction in buckets (at most one per parameter
      // chunk), ZeRO-1's gather, the experts' own (async_reduction.cpp).
      const double reductions =
          sc.replicas() <= 1
              ? 0.0
              : (p.dp_bucket.value <= 0 ? 1.0 : static_cast<double>(sc.stage_layer_count(s)) + 2) +
                    (p.zero_stage >= 1 ? 1 : 0) + (sc.model.moe.enabled() && p.edp() > 1 ? 2 : 0);
      per_device += total_mb / backwards_per_update(shape) * (1 + step_host + reductions);
    } else {
      // Gradient buckets: at most one per parameter chunk (head, layers, embedding); one per
      // stage with dp_bucket 0 (a contiguous buffer). Each with its flatten and copy-back kernels.
      // Each simulated iteration (post-validation: several) has its own.
      // Megatron's layout: its own count (megatron_buckets.hpp), and with --overlap-param-gather
      // one all-gather per bucket in the forward.
      const bool megatron = p.dp_bucket_layout == DpBucketLayout::kMegatron;
      const double buckets = sc.replicas() <= 1 ? 0
                             : megatron ? static_cast<double>(megatron_stage_buckets(sc, s).size())
                             : p.dp_bucket.value <= 0
                                 ? 1
                                 : static_cast<double>(sc.stage_layer_count(s)) + 2;
      const double forward_gathers = p.overlap_param_gather ? buckets : 0.0;
      const double per_bucket = 1.0 + (fc.reduce_passes_before > 0 ? 1 : 0) +
                                (fc.reduce_copy_back && p.zero_stage == 0 ? 1 : 0);
      const double optimizer = sc.optimizer.kind == OptimizerKind::kAdamW ? 1 : 3;
      const bool overflow_check =
          sc.training.precision == cost::Dtype::kFp16 && fc.fp16_step_syncs_per_tensor > 0;
      // The experts' own buckets over the expert data-parallel group (and their gather).
      const double expert_buckets =
          sc.model.moe.enabled() && p.edp() > 1
              ? (p.dp_bucket.value <= 0 ? 1.0 : static_cast<double>(sc.stage_layer_count(s))) + 1
              : 0.0;
      per_device +=
          steps.total * (per_bucket * buckets + forward_gathers + expert_buckets + optimizer +
                         (sc.replicas() > 1 ? 1 : 0) + (overflow_check ? 1 : 0) + step_host);
    }
    e.ops += per_device * per_stage;
  }

  if (sc.optimizer.kind != OptimizerKind::kAdamW) {
    for (int s = 0; s < pp; ++s) {
      const double blocks = shampoo_block_count(sc, s);
      e.shampoo_blocks += blocks;
      e.largest_stage_blocks = std::max(e.largest_stage_blocks, blocks);
    }
  }
  e.memory_bytes =
      kBytesPerOp * e.ops + kBytesPerDevice * e.devices + kBytesPerBlock * e.largest_stage_blocks;
  return e;
}

std::string format_gpus(double n) {
  return n == 1 ? std::string("1 simulated GPU") : format_count(n) + " simulated GPUs";
}

std::string format_count(double n) {
  if (n < 1e4) return fmt::format("{:.0f}", n);
  if (n < 1e6) return fmt::format("{:.1f} thousand", n / 1e3);
  if (n < 1e9) return fmt::format("{:.1f} million", n / 1e6);
  return fmt::format("{:.3g} billion", n / 1e9);
}

WorkloadEstimate check_workload_limits(const Scenario& sc, bool full, const WorkloadLimits& limits,
                                       cost::Diagnostics& d) {
  const WorkloadEstimate e = estimate_workload(sc, full);
  const char* mode = full ? " in --full mode" : "";
  const std::string fewer = full ? "drop --full (symmetric mode simulates one replica and one "
                                   "tensor-parallel rank per stage), or use fewer micro-batches "
                                   "or layers"
                                 : "use fewer micro-batches (/training/global_batch) or layers";
  if (e.ops > limits.max_ops) {
    d.add("", fmt::format("the simulation would have about {} ops{}, over the limit of {} "
                          "(--max-ops raises it); {}",
                          format_count(e.ops), mode, format_count(limits.max_ops), fewer));
  }
  if (e.shampoo_blocks > limits.max_shampoo_blocks) {
    d.add("/optimizer/block_size",
          fmt::format("block_size {} cuts the weights into about {} Shampoo blocks (all stages), "
                      "over the limit of {} (--max-shampoo-blocks raises it); a larger block_size "
                      "gives fewer (Distributed Shampoo's default is 1024)",
                      sc.optimizer.block_size, format_count(e.shampoo_blocks),
                      format_count(limits.max_shampoo_blocks)));
  }
  if (e.memory_bytes > limits.max_memory_bytes) {
    const bool blocks = kBytesPerBlock * e.largest_stage_blocks > 0.5 * e.memory_bytes;
    d.add("", fmt::format("the simulation would need about {} of memory{} ({}), over the limit of "
                          "{} (--max-memory raises it); {}",
                          cost::format_bytes(cost::Bytes{e.memory_bytes}), mode,
                          blocks ? format_count(e.largest_stage_blocks) +
                                       " Shampoo blocks in the largest stage"
                                 : format_count(e.ops) + " ops on " + format_gpus(e.devices),
                          cost::format_bytes(cost::Bytes{limits.max_memory_bytes}),
                          blocks ? std::string("use a larger /optimizer/block_size") : fewer));
  }
  return e;
}

}  // namespace parasim::strat
