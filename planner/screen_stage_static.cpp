// Screen::stage_static: what one pipeline stage of a candidate holds and does once a step,
// whatever its schedule: the model state and the rest of its memory floor (ZeRO, FSDP2, offload,
// FP8 weights, the communicators' buffers), the optimizer step and its offloaded part, and the
// data-parallel reductions and parameter gathers, each from the same functions the workload
// builder calls (planner/screen.hpp).
#include <algorithm>
#include <cmath>

#include "costmodel/model_state_memory.hpp"
#include "costmodel/non_tensor_memory.hpp"
#include "planner/screen.hpp"
#include "strategies/data_parallel/fsdp2_units.hpp"
#include "strategies/data_parallel/megatron_buckets.hpp"
#include "strategies/optimizers/optimizer_adamw.hpp"
#include "strategies/optimizers/optimizer_shampoo.hpp"
#include "strategies/registry/registry.hpp"
#include "strategies/workload/communicators.hpp"
#include "strategies/workload/rank_layout.hpp"

namespace parasim::plan {
namespace {

double seconds(sim::Time t) {
  return t.to_seconds();
}

int optimizer_code(const Candidate& c) {
  return static_cast<int>(c.optimizer) * 4 + static_cast<int>(c.stacking);
}

}  // namespace

const Screen::StageStatic& Screen::stage_static(const Candidate& c, int stage) {
  const ScreenKey key{
      {c.gpus, c.tp, c.pp, c.dp * 4096 + c.cp, c.zero_stage + 4 * c.fsdp2, optimizer_code(c),
       c.block_size,
       // the head's stage moves with the schedule's placement (a V: stage 0)
       stage * 8192 + strat::head_stage_of(c.schedule, c.pp), stage_layers(c, stage), c.ep,
       stage_moe_layers(c, stage),
       // etp shards the experts; the dispatcher sizes DeepEP's buffers
       ((c.etp * 4 + static_cast<int>(c.dispatcher)) * 16 + static_cast<int>(c.recipe)) * 4 +
           static_cast<int>(c.offload)}};
  auto it = stages_.find(key);
  if (it != stages_.end()) return it->second;
  const strat::Scenario sc = apply_candidate(base_, c);
  const cost::CostModel& costs = costs_.at(c.gpus);
  const strat::RankLayout layout(screen_replica_spec(c), node_size(base_, c));
  const int replicas = c.dp * c.cp;
  const int layers = stage_layers(c, stage);
  const bool mixed = base_.training.precision != cost::Dtype::kFp32;
  const double layer_params = strat::layer_params_per_tp_rank(base_.model, c.tp);
  // Dense parameters over dp x cp, the local experts over the expert data-parallel ranks
  // (the builder's set_base_memory).
  strat::LayerParams held;
  for (const auto& [first, count] : stage_ranges(c, stage)) {
    const strat::LayerParams part =
        strat::layers_params_on_rank(base_.model, sc.parallel, first, count);
    held.dense += part.dense;
    held.expert += part.expert;
  }
  if (stage == sc.head_stage())
    held.expert += strat::mtp_params_on_rank(base_.model, sc.parallel).expert;
  const double params =
      held.dense + strat::embedding_params_per_tp_rank(base_.model, c.tp, stage, sc.head_stage());
  const int edp = base_.model.moe.enabled() ? sc.parallel.edp() : 1;
  StageStatic s;
  s.state_bytes =
      (c.fsdp2 ? strat::fsdp2_model_state_bytes(params, sc.parallel.fsdp2_shard())
               : cost::model_state_bytes(params, replicas, c.zero_stage, mixed,
                                         base_.training.fp32_gradients))
          .total()
          .value +
      cost::model_state_bytes(held.expert, edp, c.zero_stage, mixed, base_.training.fp32_gradients)
          .total()
          .value;
  // Optimizer offload: the HBM share of the state and the offloaded step, as the builder
  // (set_base_memory, offload_emission.cpp) through offload_cost.hpp.
  const double shard = c.fsdp2             ? params / sc.parallel.fsdp2_shard()
                       : c.zero_stage >= 1 ? params / replicas + held.expert / edp
                                           : params + held.expert;
  const auto& off = sc.parallel.offload;
  double offload_step = 0;
  if (off.enabled()) {
    const auto dense = cost::model_state_bytes(params, replicas, c.zero_stage, mixed,
                                               base_.training.fp32_gradients);
    const auto experts = cost::model_state_bytes(held.expert, edp, c.zero_stage, mixed,
                                                 base_.training.fp32_gradients);
    const cost::ModelStateBytes both{dense.weights + experts.weights,
                                     dense.gradients + experts.gradients,
                                     dense.optimizer + experts.optimizer};
    s.state_bytes = cost::offload_memory(off, both, shard).hbm.total().value;
    const auto& host = costs.cluster().host;
    offload_step = seconds(cost::offload_step_time(
        off, shard, host.link_bandwidth.bytes_per_s, host.memory_bandwidth.bytes_per_s,
        std::min(costs.cluster().gpus_per_node, c.gpus)));
    // FSDP2's CPUOffloadPolicy on the first stage: the embedding unit's shard is copied in after
    // the CPU step, before the step's first gather, and its gradient copied out after the last
    // reduction, before the CPU step; nothing hides either (the blocks' copies hide under their
    // neighbours' compute: screen_sharding.cpp; the builder: fsdp2_emission.cpp).
    if (c.fsdp2 && off.flavour == cost::OffloadFlavour::kFsdp2 && stage == 0) {
      const strat::Fsdp2HostCopyBytes root = strat::fsdp2_host_copy_bytes(
          sc, strat::input_embedding_params_per_tp_rank(base_.model, c.tp));
      offload_step += seconds(cost::host_copy_time(host, root.gather_h2d)) +
                      seconds(cost::host_copy_time(host, root.reduce_d2h));
    }
  }
  // FP8 weights (the builder's stage_fp8_weights): casts with the optimizer step, their copies
  // or FP8 parameters in memory, FP8 linears in the parameter all-gathers.
  strat::QuantizedWeightStep fp8;
  if (sc.training.fp8.enabled()) {
    const Fp8Weights& pr = fp8_weights(c);
    for (const auto& [first, count] : stage_ranges(c, stage)) {
      for (int l = first; l < first + count; ++l) {  // the bf16 first/last layers have none
        if (!sc.training.fp8_layer(l, base_.model.layers)) continue;
        fp8.add(base_.model.moe.is_moe_layer(l) ? pr.moe : pr.layer);
      }
    }
    if (stage == sc.head_stage()) fp8.add(pr.head);
    s.state_bytes += strat::fp8_weight_memory_bytes(sc, fp8);
  }
  const double dense_gathered = strat::gathered_parameter_bytes(sc, params, fp8.elements);
  const double expert_gathered =
      strat::gathered_parameter_bytes(sc, held.expert, fp8.expert_elements);
  // Outside the allocator, as the builder counts it; without interleaving's wrap-around pair
  // (the key leaves chunks out), so never above the simulated figure.
  strat::Scenario one_chunk = sc;
  one_chunk.parallel.chunks = 1;
  s.non_tensor_bytes =
      strat::device_non_tensor_memory(one_chunk, layout, costs.cluster().fabric, stage, 0, 0)
          .total()
          .value;
  const cost::GroupPlacement dp_group =
      replicas > 1 ? layout.dp_group(stage, 0) : cost::GroupPlacement{};
  const strat::FrameworkSpec& fw = base_.training.framework;
  const strat::HostAction host = strat::optimizer_host(
      fw,
      layers * strat::layer_parameter_tensors(base_.model) +
          strat::embedding_parameter_tensors(base_.model, stage, sc.head_stage()),
      base_.training.precision == cost::Dtype::kFp16, costs.device().kernel_launch_overhead);
  s.optimizer_host = seconds(host.work);
  s.optimizer_syncs = host.syncs;
  if (c.optimizer == strat::OptimizerKind::kAdamW) {
    const double updated = shard - cost::offloaded_parameters(off, shard);
    // FSDP2 steps its fp32 shards: no 16-bit copy (the builder's stage_optimizer_time).
    s.optimizer = off.enabled() && updated <= 0
                      ? 0.0
                      : seconds(strat::adamw_step_time(updated, mixed && !c.fsdp2,
                                                       fw.counts.step_bytes_per_parameter, costs));
    s.optimizer += offload_step;
  } else {
    const strat::ShampooStepCost sh = strat::shampoo_step_cost(sc, costs, stage);
    s.optimizer = seconds(sh.factor_update + sh.inverse_roots + sh.precondition);
    s.state_bytes += sh.state_bytes;
    if (replicas > 1) {
      s.param_gather =
          seconds(cost::estimate_time(costs.collective(cost::CollectiveKind::kAllGather,
                                                       cost::Bytes{sh.update_bytes}, dp_group),
                                      costs.cluster()));
    }
  }
  s.optimizer += seconds(fp8.time);  // the FP8 weight casts after the step (emit_fp8_weight_casts)
  if (replicas > 1 && c.zero_stage != 3) {
    // The builder's buckets (data_parallel_emission.cpp): head, layers last to first, embedding.
    const double grad_elem = base_.training.gradient_bytes();
    const auto reduce =
        c.zero_stage >= 1 ? cost::CollectiveKind::kReduceScatter : cost::CollectiveKind::kAllReduce;
    std::vector<double> chunk_params;
    const double head = stage == sc.head_stage()
                            ? strat::head_params_per_tp_rank(base_.model, c.tp, sc.head_stage())
                            : 0.0;
    const double embed =
        stage == 0 ? strat::input_embedding_params_per_tp_rank(base_.model, c.tp) : 0.0;
    chunk_params.push_back(head);
    for (int l = 0; l < layers; ++l) {
      chunk_params.push_back(base_.model.moe.enabled() ? held.dense / layers : layer_params);
    }
    chunk_params.push_back(embed);
    // A bucket: its flatten passes and copy-back (FrameworkCounts::reduce_passes_before,
    // reduce_copy_back; data_parallel_emission.cpp's reduce_kernels) around its reduction.
    const double cap = base_.parallel.dp_bucket.value;  // 0: one bucket per stage
    const double gap = seconds(strat::queued_kernel_gap(costs.device()));
    const int tensors = layers * strat::layer_parameter_tensors(base_.model) +
                        strat::embedding_parameter_tensors(base_.model, stage, sc.head_stage());
    // Each bucket: the chunk that completes it, its bytes.
    std::vector<std::pair<std::size_t, double>> planned;
    if (sc.parallel.dp_bucket_layout == strat::DpBucketLayout::kMegatron) {
      // megatron_buckets.hpp (the builder's): chunks from the head's, which only the last
      // stage has; the screen's chunk 0 is the head's on every stage.
      const std::size_t shift = stage == sc.head_stage() ? 0 : 1;
      for (const strat::GradBucket& b : strat::megatron_stage_buckets(sc, stage)) {
        planned.emplace_back(b.chunk + shift, b.padded * grad_elem);
      }
    } else {
      double bytes = 0;
      for (std::size_t k = 0; k < chunk_params.size(); ++k) {
        bytes += chunk_params[k] * grad_elem;
        if (!(cap > 0 && bytes >= cap) && k + 1 < chunk_params.size()) continue;
        planned.emplace_back(k, bytes);
        bytes = 0;
      }
    }
    for (const auto& kb : planned) {
      const std::size_t k = kb.first;
      const double bucket = kb.second;
      double t = seconds(cost::estimate_time(
          costs.collective(reduce, cost::Bytes{bucket}, dp_group), costs.cluster()));
      const int passes = fw.counts.reduce_passes_before;
      if (passes > 0) {
        t += seconds(costs.memory_bound_body(cost::Bytes{2.0 * bucket * passes})) + gap * passes;
      }
      if (fw.counts.reduce_copy_back && c.zero_stage == 0) {
        const int bucket_tensors =
            std::max(1, static_cast<int>(std::lround(tensors * bucket / (params * grad_elem))));
        t += seconds(costs.memory_bound_body(cost::Bytes{2.0 * bucket})) + gap * bucket_tensors;
      }
      s.buckets.emplace_back(static_cast<int>(k), t);
    }
    if (sc.parallel.overlap_param_gather) {
      // --overlap-param-gather (the builder's emit_param_gathers): each bucket's all-gather,
      // forward order, with the chunk that waits for it; nothing after the step.
      const std::size_t shift = stage == sc.head_stage() ? 0 : 1;
      const double element_bytes = cost::bytes_per_element(base_.training.precision);
      const auto buckets = strat::megatron_stage_buckets(sc, stage);
      for (auto b = buckets.rbegin(); b != buckets.rend(); ++b) {
        s.param_gathers.emplace_back(
            static_cast<int>(b->chunk + shift),
            seconds(cost::estimate_time(
                costs.collective(cost::CollectiveKind::kAllGather,
                                 cost::Bytes{b->padded * element_bytes}, dp_group),
                costs.cluster())));
      }
    } else if (c.zero_stage >= 1 && c.optimizer == strat::OptimizerKind::kAdamW) {
      s.param_gather = seconds(cost::estimate_time(
          costs.collective(cost::CollectiveKind::kAllGather, cost::Bytes{dense_gathered}, dp_group),
          costs.cluster()));
    }
  }
  if (c.fsdp2) {
    // FSDP2's units (fsdp2_emission.cpp): the blocks' gathers and per-micro-batch reductions
    // are in the passes (fsdp2_times); the embedding and head units gathered in memory while
    // they run, and under pipelining every unit gathered from its first forward to the
    // reduction after the stage's last backward, its gradients accumulated in the reduce dtype.
    const Fsdp2Times& t = fsdp2_times(c);
    const double block = strat::fsdp2_gather_bytes(sc, layer_params, strat::Fsdp2UnitKind::kBlock);
    const int after = strat::fsdp2_post_forward_ranks(sc, strat::Fsdp2UnitKind::kBlock);
    if (c.pp > 1) {
      // No resharding after the backward: every block whole, and its fp32 accumulator, by the
      // step's end.
      s.state_bytes += layers * (block + strat::fsdp2_reduce_bytes(sc, layer_params));
    } else if (after < sc.parallel.fsdp2_shard()) {
      // Kept whole (or a 1/N shard) from each block's forward to its backward.
      s.state_bytes += layers * block / after + (after > 1 ? 2 * block : 0.0);
    } else {
      s.state_bytes += 2 * block;  // the block running and the next one prefetched
    }
    if (!strat::fsdp2_reduces_every_micro_batch(sc)) {
      for (int l = 0; l < layers; ++l) s.buckets.emplace_back(l + 1, t.reduce_at_end);
    }
  }
  if (edp > 1 && held.expert > 0) {
    // The experts' own buckets over their data-parallel group (emit_expert_buckets), screened as
    // one reduction after the dense ones, and their ZeRO gather.
    const int etp = sc.parallel.expert_tp();
    const cost::GroupPlacement edp_group = layout.expert_data_group(stage, 0, 0, etp, c.ep);
    const auto reduce =
        c.zero_stage >= 1 ? cost::CollectiveKind::kReduceScatter : cost::CollectiveKind::kAllReduce;
    const double t = seconds(cost::estimate_time(
        costs.collective(reduce, cost::Bytes{held.expert * base_.training.gradient_bytes()},
                         edp_group),
        costs.cluster()));
    s.buckets.emplace_back(layers + 1, t);  // with the last chunk (the embedding's)
    if (c.zero_stage >= 1) {
      s.param_gather +=
          seconds(cost::estimate_time(costs.collective(cost::CollectiveKind::kAllGather,
                                                       cost::Bytes{expert_gathered}, edp_group),
                                      costs.cluster()));
    }
  }
  return stages_.emplace(key, std::move(s)).first->second;
}

}  // namespace parasim::plan
