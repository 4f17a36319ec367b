// Workload builder: data parallelism (gradient buckets, ZeRO 1-3) and the optimizer step.
#include "strategies/data_parallel/zero3_gather_units.hpp"
#include "strategies/optimizers/optimizer_adamw.hpp"
#include "strategies/optimizers/optimizer_shampoo.hpp"
#include "strategies/workload/workload_builder_impl.hpp"

namespace parasim::strat::detail {

double Builder::zero3_element_bytes() const {
  return zero3_gathered_element_bytes(sc_);
}

double Builder::zero3_gathered_bytes() const {
  double elements = 0;
  for (double e : zero3_units_) elements += e;
  return elements * zero3_element_bytes() * (replicas_ - 1) / replicas_;
}

double Builder::zero3_resident_bytes(int layers, int l, bool backward, bool after) {
  Zero3Gathering z3 = sc_.training.framework.zero3;
  if (z3.unit != Zero3Gather::kPerModule) return -1;
  if (!z3.prefetch) z3.prefetch_bucket_size = 0;  // nothing gathered ahead of its module
  auto it = zero3_resident_.find(layers);
  if (it == zero3_resident_.end()) {
    const bool checkpointed = sc_.training.recompute == cost::Recompute::kFull;
    it = zero3_resident_
             .emplace(layers, zero3_resident_elements(zero3_units_, layers, checkpointed, z3))
             .first;
  }
  const Zero3Resident& r = it->second;
  const auto& per_pass =
      after ? (backward ? r.backward_end : r.forward_end) : (backward ? r.backward : r.forward);
  return per_pass[static_cast<std::size_t>(l)] * zero3_element_bytes() * (replicas_ - 1) /
         replicas_;
}

void Builder::zero3_hold(std::size_t dev, int layers, int l, bool backward, OpId first, OpId last) {
  const double resident = zero3_resident_bytes(layers, l, backward);
  if (resident < 0) {  // per layer: the gathers allocated it; freed when the layer is done,
    // one unit at a time as zero3_gather allocated them (the allocator replay frees by size)
    for (double elements : zero3_units_) {
      alloc(last, mem_zero3_, elements * zero3_element_bytes() * (replicas_ - 1) / replicas_,
            false);
    }
    return;
  }
  if (zero3_carry_.size() < out_.devices.size()) zero3_carry_.resize(out_.devices.size(), 0.0);
  double& carry = zero3_carry_[dev];
  const double left = zero3_resident_bytes(layers, l, backward, true);
  // The pass holds `resident` (what the previous pass left is part of it), then leaves `left`.
  const auto bytes = [](double b) { return static_cast<std::int64_t>(b); };
  out_.workload.set_memory(first, mem_zero3_, bytes(resident) - bytes(carry), 0);
  out_.workload.set_memory(last, mem_zero3_, 0, bytes(left) - bytes(resident));
  carry = left;
}

// One all-gather per unit (zero3_gather_units.hpp), queued in order on the dp stream; each may
// start once `prefetch_after` has (the previous layer's first op: one layer of prefetch; without
// prefetch its last op), and the layer's first op waits for the last, which the stream's order
// makes the end of all of them. A blocking fetch (DeepSpeed 2021, Zero3Gathering) also holds the
// host: torch.cuda.synchronize() before it (waiting for `last_compute`, the device's last
// compute op), one host-only op per rank of the group for the list of views, the call, then two
// syncs that wait for the gather (zero3_blocking_fetch_host is their sum, for the screen).
// `hold` false: a re-gather of weights the pass already holds in the ledger (the backward's
// after a rerun, with per-layer units).
void Builder::zero3_gather(int stage, int mb, const std::string& where,
                           const std::vector<OpId>& prefetch_after,
                           const std::vector<OpId>& last_compute, bool hold) {
  auto& w = out_.workload;
  const Zero3Gathering& z3 = sc_.training.framework.zero3;
  const double element_bytes = zero3_element_bytes();
  const double dp = replicas_;
  for (double elements : zero3_units_) {
    const double unit_bytes = elements * element_bytes;
    for (int r = 0; r < tp_sim_; ++r) {
      const auto plan = costs_.collective(cost::CollectiveKind::kAllGather, cost::Bytes{unit_bytes},
                                          layout_.dp_group(stage, r));
      std::vector<std::size_t> members;
      for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
      const auto h2d = emit_partition_h2d(stage, r, mb, where, elements, prefetch_after);
      const sim::GroupId g =
          emit_collective(members, &DeviceStreams::dp, plan, where + "zero3 all-gather", cat_dp_,
                          mb, CommKind::kDataParallel, replicas_);
      for (int d = 0; d < dp_sim_; ++d) {
        const std::size_t k = static_cast<std::size_t>(d * tp_sim_ + r);
        const OpId op = w.members(g)[static_cast<std::size_t>(d)];
        if (prefetch_after[k] != kNone) w.add_dependency(prefetch_after[k], op);
        if (!h2d.empty()) w.add_dependency(h2d[static_cast<std::size_t>(d)], op);
        if (z3.blocking_fetch) {
          const std::size_t dev = members[static_cast<std::size_t>(d)];
          host_sync(dev, last_compute[k], 1);
          host_work(dev, fw_.host.host_only_op * static_cast<std::int64_t>(replicas_));
          host_issue(dev, op, StepHost{fw_.host.collective_call, fw_.host.collective_call},
                     sim::Time::zero(), true);
          host_sync(dev, op, 2);
        }
        // Per layer (FSDP) the gathered unit is held from its gather on; per module the layer
        // pass holds what DeepSpeed keeps (zero3_hold).
        if (hold && z3.unit == Zero3Gather::kPerLayer) {
          alloc(op, mem_zero3_, unit_bytes * (dp - 1) / dp, true);
        }
        pending_[k] = op;  // the layer's first op waits for its weights
      }
    }
  }
}

// The layer's gradients reduce-scattered once `chain` is done, in zero3_reduce_calls' calls (one
// for the layer; per parameter in DeepSpeed 2021). A blocking fetch's framework also has the host
// wait, when a call overflows the gradient bucket, for the reduce-scatters of the bucket before
// the full one (stage3.py reduce_ipg_grads: the reduction stream's synchronize, then the full
// bucket's reduce-scatters), and, at the end of the backward, for all of them
// (zero3_end_backward). The calls are issued as their layer's backward ends, not deferred to the
// flush.
void Builder::zero3_reduce(int stage, int mb, const std::string& where,
                           const std::vector<OpId>& chain) {
  auto& w = out_.workload;
  const Zero3Gathering& z3 = sc_.training.framework.zero3;
  const double gradient_bytes = sc_.training.gradient_bytes();
  // The scenario's gradient bucket (parallel.dp_bucket: the framework's unless the scenario set
  // it), in elements; 0: one bucket, never flushed.
  const double bucket = sc_.parallel.dp_bucket.value / gradient_bytes;
  if (zero3_last_reduce_.size() < out_.devices.size()) {
    zero3_last_reduce_.resize(out_.devices.size(), kNone);
    zero3_flushed_reduce_.resize(out_.devices.size(), kNone);
    zero3_bucket_fill_.resize(out_.devices.size(), 0.0);
  }
  for (double elements : zero3_reduce_calls(sc_.model, sc_.parallel.tp, z3)) {
    for (int r = 0; r < tp_sim_; ++r) {
      const auto plan =
          costs_.collective(cost::CollectiveKind::kReduceScatter,
                            cost::Bytes{elements * gradient_bytes}, layout_.dp_group(stage, r));
      std::vector<std::size_t> members;
      for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
      const sim::GroupId g =
          emit_collective(members, &DeviceStreams::dp, plan, where + "zero3 reduce-scatter",
                          cat_dp_, mb, CommKind::kDataParallel, replicas_);
      for (int d = 0; d < dp_sim_; ++d) {
        const OpId op = w.members(g)[static_cast<std::size_t>(d)];
        w.add_dependency(chain[static_cast<std::size_t>(d * tp_sim_ + r)], op);
        if (!z3.blocking_fetch) continue;
        const std::size_t dev = members[static_cast<std::size_t>(d)];
        double& fill = zero3_bucket_fill_[dev];
        if (bucket > 0 && fill > 0 && fill + elements > bucket) {
          const OpId previous = zero3_flushed_reduce_[dev];
          host_sync(dev, previous, previous == kNone ? 0 : 1);
          zero3_flushed_reduce_[dev] = zero3_last_reduce_[dev];
          fill = 0;
        }
        host_issue(dev, op, StepHost{fw_.host.collective_call, fw_.host.collective_call},
                   sim::Time::zero(), true);
        fill += elements;
        zero3_last_reduce_[dev] = op;
      }
    }
  }
}

void Builder::zero3_end_backward(int stage) {
  if (!sc_.training.framework.zero3.blocking_fetch) return;
  for (int d = 0; d < dp_sim_; ++d) {
    for (int r = 0; r < tp_sim_; ++r) {
      const std::size_t dev = index(stage, d, r);
      if (dev >= zero3_last_reduce_.size() || zero3_last_reduce_[dev] == kNone) continue;
      host_sync(dev, zero3_last_reduce_[dev], 1);
      zero3_bucket_fill_[dev] = 0;
      zero3_flushed_reduce_[dev] = kNone;
    }
  }
}

double Builder::optimizer_shard(int stage) const {
  const LayerParams params = stage_params(stage);
  const double edp = sc_.model.moe.enabled() ? sc_.parallel.edp() : 1;
  if (sc_.parallel.fsdp2.enabled) return params.total() / sc_.parallel.fsdp2_shard();
  return sc_.parallel.zero_stage >= 1 ? params.dense / replicas_ + params.expert / edp
                                      : params.total();
}

sim::Time Builder::stage_optimizer_time(int stage) const {
  // FSDP2 steps its fp32 shards: no 16-bit copy to write (fsdp2_units.hpp).
  const bool mixed = sc_.training.precision != cost::Dtype::kFp32 && !sc_.parallel.fsdp2.enabled;
  const double shard = optimizer_shard(stage);
  // Offload: the GPU steps only what stays there (offload_cost.hpp).
  const double updated = shard - cost::offloaded_parameters(sc_.parallel.offload, shard);
  if (sc_.parallel.offload.enabled() && updated <= 0) return sim::Time::zero();
  return adamw_step_time(updated, mixed, fw_.counts.step_bytes_per_parameter, costs_);
}

OpId Builder::emit_fp8_weight_casts(std::size_t dev, int stage, OpId after) {
  if (!sc_.training.fp8.enabled()) return after;
  auto& w = out_.workload;
  const OpId op = w.add_compute(streams_[dev].compute, stage_fp8_weights(stage).time,
                                w.intern("fp8 weight casts"), cat_opt_);
  w.add_dependency(after, op);
  return op;
}

void Builder::emit_data_parallel(int stage) {
  auto& w = out_.workload;
  const int zero = sc_.parallel.zero_stage;
  const double grad_elem = sc_.training.gradient_bytes();
  const auto reduce =
      zero >= 1 ? cost::CollectiveKind::kReduceScatter : cost::CollectiveKind::kAllReduce;
  const LayerParams held = stage_params(stage);
  const double stage_params = held.dense;  // the experts' are reduced apart (emit_expert_buckets)
  const sim::Time step_time = stage_optimizer_time(stage);
  const bool after_backward = fw_.gradient_reduction == GradientReduction::kAfterBackward;
  const auto& counts = fw_.counts;
  const sim::Time gap = queued_kernel_gap(costs_.device());
  const sim::Time per_op = fw_.host.forward_op_no_grad + costs_.device().kernel_launch_overhead;
  const int tensors = stage_parameter_tensors(stage);
  const sim::LabelId flatten_label = w.intern("grad flatten");
  const sim::LabelId copy_label = w.intern("grad copy-back");
  auto reduce_kernels = [&](std::size_t dev, sim::LabelId label, int passes, int kernels,
                            double bytes, int index) {
    return reduce_pass_kernels(dev, label, passes, kernels, bytes, index);
  };
  // Megatron's layout scales each bucket inside the backward (gradients_ready_at).
  const bool scaled_inline = sc_.parallel.dp_bucket_layout == DpBucketLayout::kMegatron;
  // What each device's optimizer step waits for, by [tp rank][dp rank]; the host step opens on
  // every device first, since an expert group spans tp ranks when etp < tp.
  std::vector<std::vector<std::vector<OpId>>> all_waits(static_cast<std::size_t>(tp_sim_),
                                                        std::vector<std::vector<OpId>>(dp_sim_));
  for (int r = 0; r < tp_sim_; ++r) {
    for (int d = 0; d < dp_sim_; ++d) {
      const std::size_t dev = index(stage, d, r);
      host_begin(dev, "host step", -1);
      auto& wait = all_waits[static_cast<std::size_t>(r)][static_cast<std::size_t>(d)];
      wait.push_back(final_backward_[dev]);
      // FSDP2: every unit's last reduction (reduce-scatter, HSDP all-reduce, accumulation).
      wait.insert(wait.end(), fsdp2_reduced_[dev].begin(), fsdp2_reduced_[dev].end());
      fsdp2_reduced_[dev].clear();
    }
  }
  emit_expert_buckets(stage, all_waits);
  std::vector<std::vector<OpId>> all_steps(static_cast<std::size_t>(tp_sim_));  // [r][d]
  const bool gather_experts = sc_.model.moe.enabled() && sc_.parallel.edp() > 1 && zero >= 1 &&
                              zero <= 2 && sc_.optimizer.kind == OptimizerKind::kAdamW;
  for (int r = 0; r < tp_sim_; ++r) {
    std::vector<std::vector<OpId>>& waits = all_waits[static_cast<std::size_t>(r)];
    const auto& chunks = grad_ready_[index(stage, 0, r)];
    // Each bucket: the chunk whose gradients complete it, its bytes.
    std::vector<std::pair<std::size_t, double>> buckets;
    if (sc_.parallel.dp_bucket_layout == DpBucketLayout::kMegatron) {
      for (const GradBucket& b : megatron_chunk_buckets(stage, chunks)) {
        buckets.emplace_back(b.chunk, b.padded * grad_elem);
      }
    } else {
      double bytes = 0;
      for (std::size_t c = 0; c < chunks.size(); ++c) {
        bytes += chunks[c].second * grad_elem;
        // dp_bucket 0: every gradient of the stage in one bucket (a contiguous gradient buffer).
        const double cap = sc_.parallel.dp_bucket.value;
        if ((cap > 0 && bytes >= cap) || c + 1 == chunks.size()) {
          buckets.emplace_back(c, bytes);
          bytes = 0;
        }
      }
    }
    int bucket_index = 0;
    for (const auto& planned : buckets) {
      const std::size_t c = planned.first;
      const double bucket = planned.second;
      if (replicas_ == 1) continue;
      const auto plan = costs_.collective(reduce, cost::Bytes{bucket}, layout_.dp_group(stage, r));
      std::vector<std::size_t> members;
      for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
      const auto g = emit_collective(members, &DeviceStreams::dp, plan,
                                     zero >= 1 ? "grad reduce-scatter" : "grad all-reduce", cat_dp_,
                                     bucket_index, CommKind::kDataParallel, replicas_);
      // The bucket's share of the stage's parameter tensors (copy-back kernels).
      const int bucket_tensors =
          std::max(1, static_cast<int>(std::lround(tensors * bucket / (stage_params * grad_elem))));
      for (int d = 0; d < dp_sim_; ++d) {
        const std::size_t dev = index(stage, d, r);
        const OpId member = w.members(g)[static_cast<std::size_t>(d)];
        auto& wait = waits[static_cast<std::size_t>(d)];
        w.add_dependency(grad_ready_[dev][c].first, member);
        // After the backward: the host issues the reduction once the whole backward is issued,
        // and the bucket goes once it has run (DeepSpeed's ReduceGrads, Megatron's
        // allreduce_gradients); overlapped: as soon as its gradients are ready (PyTorch DDP).
        if (after_backward) w.add_dependency(final_backward_[dev], member);
        if (counts.reduce_passes_before > 0 && scaled_inline) {
          const OpId scaled = bucket_scaled_[dev].at(static_cast<std::size_t>(bucket_index));
          w.add_dependency(scaled, member);
          wait.push_back(scaled);
        } else if (counts.reduce_passes_before > 0) {
          const OpId flatten = reduce_kernels(dev, flatten_label, counts.reduce_passes_before,
                                              counts.reduce_passes_before, bucket, bucket_index);
          w.add_dependency(grad_ready_[dev][c].first, flatten);
          if (after_backward) w.add_dependency(final_backward_[dev], flatten);
          w.add_dependency(flatten, member);
          wait.push_back(flatten);
        }
        if (after_backward)
          host_issue(dev, member, StepHost{fw_.host.collective_call, fw_.host.collective_call},
                     sim::Time::zero(), true);
        wait.push_back(member);
        if (sc_.parallel.offload.enabled()) offload_buckets_[dev].emplace_back(member, bucket);
        if (counts.reduce_copy_back && zero == 0) {
          const OpId copy =
              reduce_kernels(dev, copy_label, 1, bucket_tensors, bucket, bucket_index);
          w.add_dependency(member, copy);
          wait.push_back(copy);
        }
      }
      ++bucket_index;
    }
    // DeepSpeed's fp16 overflow check, float(x.float().sum()) per gradient: its GPU pass (read the
    // gradient, write and read its fp32 copy), issued before the optimizer's syncs.
    const bool fp16 = sc_.training.precision == cost::Dtype::kFp16;
    if (fp16 && counts.fp16_step_syncs_per_tensor > 0) {
      const double updated_params = zero >= 1 ? stage_params / replicas_ : stage_params;
      const double bytes = updated_params * (cost::bytes_per_element(sc_.training.precision) + 8);
      for (int d = 0; d < dp_sim_; ++d) {
        const std::size_t dev = index(stage, d, r);
        const int kernels = 2 * counts.fp16_step_syncs_per_tensor * tensors;
        const sim::Time body = costs_.memory_bound_body(cost::Bytes{bytes});
        const OpId check = w.add_compute(streams_[dev].compute, body + gap * kernels,
                                         w.intern("overflow check"), cat_opt_);
        auto& wait = waits[static_cast<std::size_t>(d)];
        for (OpId before : wait) w.add_dependency(before, check);
        host_issue(dev, check, StepHost{per_op, per_op * kernels},
                   sim::Time::ps(body.picoseconds() / kernels) + gap, false);
        wait.push_back(check);
      }
    }
    if (sc_.optimizer.kind != OptimizerKind::kAdamW) {
      emit_shampoo(stage, r, waits);
      continue;
    }
    std::vector<OpId> steps;
    for (int d = 0; d < dp_sim_; ++d) {
      const std::size_t dev = index(stage, d, r);
      const bool offload = sc_.parallel.offload.enabled();
      const OpId op =
          w.add_compute(streams_[dev].compute, step_time, w.intern("adamw step"), cat_opt_);
      for (OpId m : waits[static_cast<std::size_t>(d)]) w.add_dependency(m, op);
      const OpId casts = emit_fp8_weight_casts(dev, stage, op);
      host_optimizer(dev, stage, waits[static_cast<std::size_t>(d)],
                     casts == op ? std::vector<OpId>{op} : std::vector<OpId>{op, casts});
      // Offload: the CPU's part of the step after the gradients' copies, its parameters copied
      // back; what follows waits for both (offload_emission.cpp).
      steps.push_back(
          offload ? emit_offloaded_step(dev, stage, waits[static_cast<std::size_t>(d)], casts)
                  : casts);
    }
    // --overlap-param-gather: the next step's forward gathers them (emit_param_gathers).
    if (zero >= 1 && zero <= 2 && replicas_ > 1 && !sc_.parallel.overlap_param_gather) {
      // Updated weights (training precision; FP8 linears in FP8 with fp8.param_gather)
      // all-gathered back to every replica (gathered size: whole stage).
      const double gathered =
          gathered_parameter_bytes(sc_, stage_params, stage_fp8_weights(stage).elements);
      const auto plan = costs_.collective(cost::CollectiveKind::kAllGather, cost::Bytes{gathered},
                                          layout_.dp_group(stage, r));
      std::vector<std::size_t> members;
      for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
      const auto g = emit_collective(members, &DeviceStreams::dp, plan, "param all-gather", cat_dp_,
                                     -1, CommKind::kDataParallel, replicas_);
      for (int d = 0; d < dp_sim_; ++d) {
        const OpId member = w.members(g)[static_cast<std::size_t>(d)];
        w.add_dependency(steps[static_cast<std::size_t>(d)], member);
        host_issue(index(stage, d, r), member,
                   StepHost{fw_.host.collective_call, fw_.host.collective_call}, sim::Time::zero(),
                   true);
      }
    }
    all_steps[static_cast<std::size_t>(r)] = steps;
    // The host steps close here, rank by rank, unless the experts' gather (its group may span
    // tp ranks) still has to be issued by them.
    if (!gather_experts) {
      for (int d = 0; d < dp_sim_; ++d) host_close(index(stage, d, r));
    }
  }
  if (!gather_experts) return;
  emit_expert_param_gather(stage, all_steps);
  for (int r = 0; r < tp_sim_; ++r) {
    for (int d = 0; d < dp_sim_; ++d) host_close(index(stage, d, r));
  }
}

// The reduction's own kernels: `passes` memory passes over a bucket of `bytes` (read + write),
// one kernel each (or one kernel per parameter tensor of the bucket for the copy-back).
OpId Builder::reduce_pass_kernels(std::size_t dev, sim::LabelId label, int passes, int kernels,
                                  double bytes, int index) {
  auto& w = out_.workload;
  const sim::Time gap = queued_kernel_gap(costs_.device());
  const sim::Time per_op = fw_.host.forward_op_no_grad + costs_.device().kernel_launch_overhead;
  const sim::Time body = costs_.memory_bound_body(cost::Bytes{2.0 * bytes * passes});
  const OpId op = w.add_compute(streams_[dev].compute, body + gap * kernels, label, cat_dp_, index);
  host_issue(dev, op, StepHost{per_op, per_op * kernels},
             sim::Time::ps(body.picoseconds() / kernels) + gap, false);
  return op;
}

// A chunk's gradients of the step's last backward. With Megatron's layout, a bucket its chunk
// completes is scaled by 1 / (dp x cp) right there on the compute stream, as start_grad_sync
// does from the backward hook (param_and_grad_buffer.py, `bucket.grad_data *=
// gradient_scaling_factor`, 0.19.2), before its collective is launched.
void Builder::gradients_ready_at(std::size_t dev, OpId op, double elements) {
  grad_ready_[dev].emplace_back(op, elements);
  const int passes = fw_.counts.reduce_passes_before;
  if (sc_.parallel.dp_bucket_layout != DpBucketLayout::kMegatron || replicas_ == 1 || passes == 0) {
    return;
  }
  const int stage = out_.devices[dev].stage;
  auto it = megatron_buckets_.find(stage);
  if (it == megatron_buckets_.end()) {
    it = megatron_buckets_.emplace(stage, megatron_stage_buckets(sc_, stage)).first;
  }
  const std::size_t chunk = grad_ready_[dev].size() - 1;
  auto& scaled = bucket_scaled_[dev];
  if (chunk == 0) scaled.clear();
  const double grad_elem = sc_.training.gradient_bytes();
  for (const GradBucket& b : it->second) {
    if (b.chunk != chunk) continue;
    const auto index = static_cast<int>(scaled.size());
    const OpId scale = reduce_pass_kernels(dev, out_.workload.intern("grad scale"), passes, passes,
                                           b.padded * grad_elem, index);
    out_.workload.add_dependency(op, scale);
    scaled.push_back(scale);
  }
}

std::vector<GradBucket> Builder::megatron_chunk_buckets(
    int stage, const std::vector<std::pair<OpId, double>>& chunks) const {
  const auto tensors = megatron_stage_tensors(sc_, stage);
  bool same = tensors.size() == chunks.size();
  for (std::size_t c = 0; same && c < chunks.size(); ++c) {
    double sum = 0;
    for (const MegatronTensor& t : tensors[c]) sum += t.elements;
    same = std::abs(sum - chunks[c].second) <= 1e-9 * std::max(1.0, sum);
  }
  if (!same) {
    throw std::logic_error("megatron_stage_tensors does not match the stage's gradient chunks");
  }
  return megatron_stage_buckets(sc_, stage);
}

// --overlap-param-gather (megatron-core 0.19.2 distributed_data_parallel.py, the forward
// pre-hook; param_and_grad_buffer.py finish_param_sync): on the step's first forward the
// buckets' all-gathers run in forward order on the dp stream (each next one dispatched once the
// previous is waited on; the host runs ahead of the GPU, so they queue back to back), and a chunk
// (embedding, layer, head) starts once every bucket holding one of its parameters is gathered:
// its first op waits for the last of them in that order. Per forward position, per simulated
// rank: the gather to wait for (kNone: none begins there).
std::vector<std::vector<OpId>> Builder::emit_param_gathers(int stage, int mb) {
  auto& w = out_.workload;
  const std::size_t n = megatron_stage_tensors(sc_, stage).size();
  const auto ranks = static_cast<std::size_t>(dp_sim_ * tp_sim_);
  std::vector<std::vector<OpId>> wait(n, std::vector<OpId>(ranks, kNone));
  if (replicas_ == 1) return wait;
  const double element_bytes = cost::bytes_per_element(sc_.training.precision);
  const auto buckets = megatron_stage_buckets(sc_, stage);
  for (auto b = buckets.rbegin(); b != buckets.rend(); ++b) {  // forward order
    const std::size_t at = n - 1 - b->chunk;
    for (int r = 0; r < tp_sim_; ++r) {
      const auto plan =
          costs_.collective(cost::CollectiveKind::kAllGather,
                            cost::Bytes{b->padded * element_bytes}, layout_.dp_group(stage, r));
      std::vector<std::size_t> members;
      for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
      // Not the optimizer step's (step_report.cpp counts "param all-gather" there).
      const auto g =
          emit_collective(members, &DeviceStreams::dp, plan, "param all-gather (forward)", cat_dp_,
                          mb, CommKind::kDataParallel, replicas_);
      for (int d = 0; d < dp_sim_; ++d) {
        wait[at][static_cast<std::size_t>(d * tp_sim_ + r)] =
            w.members(g)[static_cast<std::size_t>(d)];
      }
    }
  }
  return wait;
}

// The local experts' gradients, reduced over the expert data-parallel group in buckets of their
// own (Megatron's DDP keeps expert parameters in separate buffers), each bucket after its last
// layer's backward; each group once, from its first simulated member.
void Builder::emit_expert_buckets(int stage, std::vector<std::vector<std::vector<OpId>>>& waits) {
  const int edp = sc_.model.moe.enabled() ? sc_.parallel.edp() : 1;
  if (edp == 1 || expert_grad_ready_[index(stage, 0, 0)].empty()) return;
  auto& w = out_.workload;
  const int zero = sc_.parallel.zero_stage;
  const auto reduce =
      zero >= 1 ? cost::CollectiveKind::kReduceScatter : cost::CollectiveKind::kAllReduce;
  const double grad_elem = sc_.training.gradient_bytes();
  const double cap = sc_.parallel.dp_bucket.value;
  for (int d = 0; d < dp_sim_; ++d) {
    for (int r = 0; r < tp_sim_; ++r) {
      const std::vector<std::size_t> members = expert_data_members(stage, d, r);
      if (members.front() != index(stage, d, r)) continue;
      const cost::GroupPlacement place = expert_data_placement(stage, d, r);
      const auto& chunks = expert_grad_ready_[members.front()];
      double bucket = 0;
      for (std::size_t c = 0; c < chunks.size(); ++c) {
        bucket += chunks[c].second * grad_elem;
        if (!((cap > 0 && bucket >= cap) || c + 1 == chunks.size())) continue;
        const auto plan = costs_.collective(reduce, cost::Bytes{bucket}, place);
        const auto g =
            emit_collective(members, &DeviceStreams::dp, plan,
                            zero >= 1 ? "expert grad reduce-scatter" : "expert grad all-reduce",
                            cat_dp_, -1, CommKind::kDataParallel, edp);
        for (std::size_t i = 0; i < members.size(); ++i) {
          const std::size_t dev = members[i];
          const OpId member = w.members(g)[i];
          w.add_dependency(expert_grad_ready_[dev][c].first, member);
          if (fw_.gradient_reduction == GradientReduction::kAfterBackward) {
            w.add_dependency(final_backward_[dev], member);
            host_issue(dev, member, StepHost{fw_.host.collective_call, fw_.host.collective_call},
                       sim::Time::zero(), true);
          }
          waits[static_cast<std::size_t>(out_.devices[dev].tp_rank)]
               [static_cast<std::size_t>(out_.devices[dev].dp_rank)]
                   .push_back(member);
        }
        bucket = 0;
      }
    }
  }
}

// ZeRO 1-2: the updated local experts all-gathered back over the expert data-parallel group.
std::vector<OpId> Builder::emit_expert_param_gather(int stage,
                                                    const std::vector<std::vector<OpId>>& steps,
                                                    int label_index) {
  std::vector<OpId> members_of(static_cast<std::size_t>(dp_sim_ * tp_sim_), kNone);
  const int edp = sc_.model.moe.enabled() ? sc_.parallel.edp() : 1;
  const double experts = stage_params(stage).expert;
  if (edp == 1 || experts == 0) return members_of;
  const double gathered =
      gathered_parameter_bytes(sc_, experts, stage_fp8_weights(stage).expert_elements);
  auto& w = out_.workload;
  for (int d = 0; d < dp_sim_; ++d) {
    for (int r = 0; r < tp_sim_; ++r) {
      const std::vector<std::size_t> members = expert_data_members(stage, d, r);
      if (members.front() != index(stage, d, r)) continue;
      const auto plan = costs_.collective(cost::CollectiveKind::kAllGather, cost::Bytes{gathered},
                                          expert_data_placement(stage, d, r));
      const auto g = emit_collective(members, &DeviceStreams::dp, plan, "expert param all-gather",
                                     cat_dp_, label_index, CommKind::kDataParallel, edp);
      for (std::size_t i = 0; i < members.size(); ++i) {
        const std::size_t dev = members[i];
        const auto& at = out_.devices[dev];
        w.add_dependency(
            steps[static_cast<std::size_t>(at.tp_rank)][static_cast<std::size_t>(at.dp_rank)],
            w.members(g)[i]);
        host_issue(dev, w.members(g)[i],
                   StepHost{fw_.host.collective_call, fw_.host.collective_call}, sim::Time::zero(),
                   true);
        members_of[static_cast<std::size_t>(at.dp_rank * tp_sim_ + at.tp_rank)] = w.members(g)[i];
      }
    }
  }
  return members_of;
}

// Shampoo / DASH: factor update, inverse roots and preconditioning on the compute stream, then
// the all-gather of the updates each rank computed for its blocks (optimizer_shampoo.hpp).
void Builder::emit_shampoo(int stage, int r, const std::vector<std::vector<OpId>>& waits) {
  auto& w = out_.workload;
  const ShampooStepCost c = shampoo_cost(stage);
  if (stage == 0) {
    out_.optimizer_host_ops = c.host_ops;
    out_.optimizer_host_syncs = c.host_syncs;
  }
  std::vector<OpId> last;
  for (int d = 0; d < dp_sim_; ++d) {
    const std::size_t dev = index(stage, d, r);
    OpId prev = final_backward_[dev];
    bool first = true;
    std::vector<OpId> parts;
    // The parts' times already hold their eager host loop (optimizer_shampoo.hpp); the
    // framework's host issues them after its per-step work and syncs.
    for (const auto& [label, time] :
         {std::pair{"factor update", c.factor_update}, std::pair{"inverse roots", c.inverse_roots},
          std::pair{"precondition and grafting", c.precondition}}) {
      const OpId op = w.add_compute(streams_[dev].compute, time, w.intern(label), cat_opt_);
      w.add_dependency(prev, op);
      if (first) {
        for (OpId m : waits[static_cast<std::size_t>(d)]) w.add_dependency(m, op);
        first = false;
      }
      prev = op;
      parts.push_back(op);
    }
    if (const OpId casts = emit_fp8_weight_casts(dev, stage, prev); casts != prev) {
      parts.push_back(casts);
      prev = casts;
    }
    host_optimizer(dev, stage, waits[static_cast<std::size_t>(d)], parts);
    last.push_back(prev);
  }
  if (replicas_ <= 1) {
    for (int d = 0; d < dp_sim_; ++d) host_close(index(stage, d, r));
    return;
  }
  const auto plan = costs_.collective(cost::CollectiveKind::kAllGather, cost::Bytes{c.update_bytes},
                                      layout_.dp_group(stage, r));
  std::vector<std::size_t> members;
  for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
  const auto g = emit_collective(members, &DeviceStreams::dp, plan, "optimizer update all-gather",
                                 cat_dp_, -1, CommKind::kDataParallel, replicas_);
  for (int d = 0; d < dp_sim_; ++d) {
    const OpId member = w.members(g)[static_cast<std::size_t>(d)];
    w.add_dependency(last[static_cast<std::size_t>(d)], member);
    host_issue(index(stage, d, r), member,
               StepHost{fw_.host.collective_call, fw_.host.collective_call}, sim::Time::zero(),
               true);
    host_close(index(stage, d, r));
  }
}

}  // namespace parasim::strat::detail
