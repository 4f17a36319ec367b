// Workload builder: optimizer offload (costmodel/offload_cost.hpp, docs/offload.md). The copies
// between a GPU and its host are single-member transfers over that GPU's host link (one link per
// direction, on copy streams of their own); the CPU's optimizer step is host time on the
// framework's host thread, which runs it in DeepSpeed (DeepSpeedCPUAdam called from
// stage_1_and_2.py's step) and Megatron (HybridDeviceOptimizer.step's loop) alike.
#include "strategies/workload/workload_builder_impl.hpp"

namespace parasim::strat::detail {

void Builder::add_offload_streams(sim::DeviceId dev, DeviceStreams& st, const std::string& prefix) {
  auto& w = out_.workload;
  const cost::HostSpec& host = costs_.cluster().host;
  st.d2h = w.add_stream(dev, "host-copy-d2h");
  // Megatron without --overlap-cpu-optimizer-d2h-h2d copies both ways on one stream (its
  // _d2h_stream and _h2d_stream are the current stream); the others copy back on their own.
  const bool one_stream = sc_.parallel.offload.flavour == cost::OffloadFlavour::kMegatron &&
                          !sc_.parallel.offload.overlap;
  st.h2d = one_stream ? st.d2h : w.add_stream(dev, "host-copy-h2d");
  st.link_d2h = w.add_link(prefix + "host-d2h", host.link_bandwidth.bytes_per_s);
  st.link_h2d = w.add_link(prefix + "host-h2d", host.link_bandwidth.bytes_per_s);
  out_.host_links.emplace_back(st.link_d2h, st.link_h2d);
  for (int l = 0; l < 2; ++l) {  // neither NVLink nor NIC traffic in the link reports
    out_.link_is_inter.push_back(0);
    out_.link_is_egress.push_back(0);
  }
}

OpId Builder::host_copy(std::size_t dev, bool to_host, double bytes, const char* label, int index) {
  const DeviceStreams& st = streams_[dev];
  return host_copy_on(dev, to_host ? st.d2h : st.h2d, to_host, bytes, label, cat_opt_, index);
}

OpId Builder::host_copy_on(std::size_t dev, sim::StreamId stream, bool to_host, double bytes,
                           const std::string& label, sim::LabelId category, int index) {
  auto& w = out_.workload;
  const DeviceStreams& st = streams_[dev];
  const sim::PhaseSpec phase{costs_.cluster().host.link_latency, 0, 1};
  const sim::FlowSpec flow{{to_host ? st.link_d2h : st.link_h2d, sim::kNone}, bytes, bytes, 0};
  const sim::GroupId g = w.add_group({&stream, 1}, {&phase, 1}, {&flow, 1}, w.intern(label),
                                     category, index, false, bytes);
  w.set_copy_engine(g);
  out_.groups.push_back(
      GroupInfo{CommKind::kDataParallel, cost::CollectiveKind::kSendRecv, bytes, 1, true});
  return w.members(g).front();
}

// DeepSpeed with gradient accumulation (stage_1_and_2.py, copy_grads_in_partition ->
// async_accumulate_grad_in_cpu_via_gpu): after every micro-batch's backward but the step's last,
// the partition's 16-bit gradients go to the host buffer, and from the second micro-batch on the
// buffer comes back first to be added on the GPU. ZeRO-3 with offload_param (stage3.py
// partition_grads): the same, and the first micro-batch's buffer comes back too (`.to(device)`).
// The step's last micro-batch's copies are part
// of the step (emit_offloaded_step). Each backward item of a stage carries its chunk's share.
void Builder::emit_offload_accumulation(std::size_t dev, int stage, int mb, OpId after) {
  const auto& off = sc_.parallel.offload;
  if (off.flavour != cost::OffloadFlavour::kDeepSpeed || m_ <= 1) return;
  const int k = mb % m_;
  if (k == m_ - 1) return;
  const double bytes = cost::offloaded_parameters(off, optimizer_shard(stage)) *
                       sc_.training.gradient_bytes() / chunks_;
  auto& w = out_.workload;
  OpId prev = after;
  if (k > 0) {
    prev = host_copy(dev, false, bytes, "offload grad accumulate h2d", mb);
    w.add_dependency(after, prev);
  }
  const OpId d2h = host_copy(dev, true, bytes, "offload grad d2h", mb);
  w.add_dependency(prev, d2h);
  offload_pending_[dev].push_back(d2h);
  if (off.params && k == 0) {  // ZeRO-3: the first micro-batch's buffer also comes back
    const OpId back = host_copy(dev, false, bytes, "offload grad h2d", mb);
    w.add_dependency(d2h, back);
    offload_pending_[dev].push_back(back);
  }
}

OpId Builder::emit_offloaded_step(std::size_t dev, int stage, const std::vector<OpId>& waits,
                                  OpId gpu_step) {
  auto& w = out_.workload;
  const auto& off = sc_.parallel.offload;
  const double shard = optimizer_shard(stage);
  const double cpu_params = cost::offloaded_parameters(off, shard);
  const cost::HostLinkBytes total =
      cost::offload_link_bytes(off, shard, m_, sc_.training.gradient_bytes());
  // The step's own copies: DeepSpeed's accumulation copies of earlier micro-batches are already
  // out (emit_offload_accumulation); its last micro-batch adds one 16-bit round trip before the
  // fp32 copy (m > 1).
  double d2h = total.d2h.value, h2d = total.h2d.value;
  if (off.flavour == cost::OffloadFlavour::kDeepSpeed && m_ > 1 && !off.params) {
    const double g = cpu_params * sc_.training.gradient_bytes();
    d2h = g + 4 * cpu_params;
    h2d = 2 * cpu_params;
    const OpId acc = host_copy(dev, false, g, "offload grad accumulate h2d", -1);
    for (OpId m : waits) w.add_dependency(m, acc);
    offload_pending_[dev].push_back(acc);
  }
  const int ranks_per_node =
      std::min(costs_.cluster().gpus_per_node, replicas_ * sc_.parallel.tp * pp_);
  const sim::Time cpu = cost::cpu_optimizer_time(
      off, cpu_params, costs_.cluster().host.memory_bandwidth.bytes_per_s, ranks_per_node);
  if (off.flavour == cost::OffloadFlavour::kFsdp2) {
    // FSDP2: each unit's reduced gradient went to the host after its reduction (fsdp2_reduce;
    // `waits` holds those copies); finalize_backward synchronizes on every copy's event
    // (_fsdp_param_group.py L890-896, torch 2.15), then the host thread steps torch's AdamW on
    // the CPU tensors. Nothing comes back: the next step's gathers copy the updated shards in.
    host_close(dev);
    for (OpId m : waits) host_[dev].waits.push_back(m);
    host_work(dev, cpu);
    const OpId step = host_close(dev);
    offload_cpu_step_[dev] = step;
    if (dev == 0) out_.offload_step = {waits.back(), step};
    return gpu_step;
  }
  if (off.params) {
    // ZeRO-3 with offload_param (offload_cost.hpp): the last micro-batch's 16-bit round trip
    // (one micro-batch: down, then `.to(device)`; else up, added on the GPU, down), the fp32
    // copy from the GPU buffer at the boundary, the CPU step; it writes the 16-bit partition in
    // host memory, which the next step's gathers copy in (nothing comes back here).
    const double g = cpu_params * sc_.training.gradient_bytes();
    const OpId first =
        host_copy(dev, m_ <= 1, g, m_ > 1 ? "offload grad accumulate h2d" : "offload grad d2h", -1);
    const OpId second =
        host_copy(dev, m_ > 1, g, m_ > 1 ? "offload grad d2h" : "offload grad h2d", -1);
    for (OpId m : waits) w.add_dependency(m, first);
    for (OpId m : offload_pending_[dev]) w.add_dependency(m, first);
    w.add_dependency(first, second);
    const OpId fp32 = host_copy(dev, true, 4 * cpu_params, "offload fp32 grad d2h", -1);
    w.add_dependency(second, fp32);
    offload_pending_[dev].clear();
    offload_buckets_[dev].clear();
    host_close(dev);
    host_[dev].waits.push_back(fp32);
    host_work(dev, cpu);
    const OpId step = host_close(dev);
    offload_cpu_step_[dev] = step;
    if (dev == 0) out_.offload_step = {first, step};
    return gpu_step;
  }
  // Megatron with --overlap-cpu-optimizer-d2h-h2d: one CPU optimizer per parameter, each waiting
  // for its own gradient's copy and copying its parameter back after its step, so copies and
  // steps pipeline; the parameters of the shard are taken in `pieces` equal groups (at most 16,
  // bounding the ops). Otherwise one piece: every copy, then the step, then every copy back.
  const bool pipelined = off.flavour == cost::OffloadFlavour::kMegatron && off.overlap;
  const int pieces = pipelined ? std::clamp(stage_parameter_tensors(stage), 1, 16) : 1;
  std::vector<OpId> d2h_ops;
  // DeepSpeed copies each bucket's partition once the bucket is reduced
  // (reduce_ipg_grads -> copy_grads_in_partition), under the rest of the reduction.
  const auto& buckets = offload_buckets_[dev];
  double bucket_bytes = 0;
  for (const auto& b : buckets) bucket_bytes += b.second;
  if (off.flavour == cost::OffloadFlavour::kDeepSpeed && bucket_bytes > 0) {
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      const OpId op = host_copy(dev, true, d2h * buckets[i].second / bucket_bytes,
                                "offload grad d2h", static_cast<int>(i));
      w.add_dependency(buckets[i].first, op);
      for (OpId m : offload_pending_[dev]) w.add_dependency(m, op);
      d2h_ops.push_back(op);
    }
  } else {
    for (int i = 0; i < pieces; ++i) {
      const OpId op = host_copy(dev, true, d2h / pieces, "offload grad d2h", pieces > 1 ? i : -1);
      for (OpId m : waits) w.add_dependency(m, op);
      for (OpId m : offload_pending_[dev]) w.add_dependency(m, op);
      d2h_ops.push_back(op);
    }
  }
  offload_pending_[dev].clear();
  offload_buckets_[dev].clear();
  OpId last = kNone;
  for (int i = 0; i < pieces; ++i) {
    // The host waits for the piece's gradients (a sync; one piece: the last copy, which the copy
    // stream's order puts after the others), steps it, then issues its copy back, which follows
    // the GPU's own step on the stream it waits for.
    host_close(dev);
    host_[dev].waits.push_back(pieces == 1 ? d2h_ops.back() : d2h_ops[static_cast<std::size_t>(i)]);
    host_work(dev, sim::Time::ps(cpu.picoseconds() / pieces));
    const OpId up = host_copy(dev, false, h2d / pieces, "offload param h2d", pieces > 1 ? i : -1);
    w.add_dependency(gpu_step, up);
    host_issue(dev, up, StepHost{fw_.host.host_only_op, fw_.host.host_only_op}, sim::Time::zero(),
               true);
    last = up;
  }
  // The step's part after the reduction: from the last gradient copy (earlier ones ran under it).
  if (dev == 0) out_.offload_step = {pieces == 1 ? d2h_ops.back() : d2h_ops.front(), last};
  return last;
}

std::vector<OpId> Builder::emit_partition_h2d(int stage, int r, int mb, const std::string& where,
                                              double elements,
                                              const std::vector<OpId>& prefetch_after) {
  std::vector<OpId> ops;
  if (!sc_.parallel.offload.params) return ops;
  auto& w = out_.workload;
  const double bytes = zero3_partition_h2d_bytes(elements, replicas_,
                                                 cost::bytes_per_element(sc_.training.precision));
  for (int d = 0; d < dp_sim_; ++d) {
    const std::size_t dev = index(stage, d, r);
    const std::size_t k = static_cast<std::size_t>(d * tp_sim_ + r);
    // On the gather's stream, after the CPU step that wrote the partition.
    const OpId op = host_copy_on(dev, streams_[dev].dp, false, bytes, where + "zero3 partition h2d",
                                 cat_dp_, mb);
    if (prefetch_after[k] != kNone) w.add_dependency(prefetch_after[k], op);
    if (offload_cpu_step_[dev] != kNone) w.add_dependency(offload_cpu_step_[dev], op);
    ops.push_back(op);
  }
  return ops;
}

}  // namespace parasim::strat::detail
