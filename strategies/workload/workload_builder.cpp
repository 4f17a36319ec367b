// Workload builder: devices and links, base memory, layer steps and collectives, build().
#include "strategies/workload/workload_builder_impl.hpp"

namespace parasim::strat::detail {

void Builder::alloc(OpId op, std::uint8_t category, double bytes, bool at_start,
                    std::uint64_t tag) {
  const auto b = static_cast<std::int64_t>(bytes);
  if (at_start)
    out_.workload.set_memory(op, category, b, 0, tag);
  else
    out_.workload.set_memory(op, category, 0, -b, tag);
}

void Builder::add_devices() {
  auto& w = out_.workload;
  // The cost model's cluster: the scenario's with a profile's overrides (link bandwidths too).
  const auto& c = costs_.cluster();
  for (int s = 0; s < pp_; ++s) {
    for (int d = 0; d < dp_sim_; ++d) {
      for (int r = 0; r < tp_sim_; ++r) {
        const int rank = layout_.rank(s, d, r);
        const std::string name = tp_sim_ * dp_sim_ == 1
                                     ? fmt::format("stage {} (gpu {})", s, rank)
                                     : fmt::format("gpu {} (pp {} dp {} tp {})", rank, s, d, r);
        const sim::DeviceId dev = w.add_device(name);
        DeviceStreams st{};
        st.compute = w.add_stream(dev, "compute");
        st.host = w.add_stream(dev, "host", sim::StreamKind::kHost);
        st.tp = w.add_stream(dev, "tp-comm");
        for (int chunk = 0; chunk < chunks_; ++chunk) {
          const std::string suffix = chunks_ > 1 ? fmt::format(" c{}", chunk) : std::string();
          st.recv_fwd.push_back(w.add_stream(dev, "pp-recv-fwd" + suffix));
          st.recv_bwd.push_back(w.add_stream(dev, "pp-recv-bwd" + suffix));
          st.send_fwd.push_back(w.add_stream(dev, "pp-send-fwd" + suffix));
          st.send_bwd.push_back(w.add_stream(dev, "pp-send-bwd" + suffix));
        }
        st.dp = w.add_stream(dev, "dp-comm");
        const bool fsdp2 = sc_.parallel.fsdp2.enabled;
        st.fsdp_reduce = fsdp2 ? w.add_stream(dev, "fsdp2-reduce-scatter") : st.dp;
        st.fsdp_replica = fsdp2 && sc_.parallel.fsdp2.replicate > 1
                              ? w.add_stream(dev, "fsdp2-all-reduce")
                              : st.fsdp_reduce;
        st.cp = sc_.parallel.cp > 1 ? w.add_stream(dev, "cp-comm") : st.tp;
        st.ep = sc_.model.moe.enabled() ? w.add_stream(dev, "ep-comm") : st.tp;
        st.weights = sc_.parallel.tp_placement == TpPlacement::kTsp
                         ? w.add_stream(dev, "weight-comm")
                         : st.tp;
        const std::string p = fmt::format("gpu{}.", rank);
        st.links[kIntraOut] = w.add_link(p + "nvlink-out", c.intra_node.bandwidth.bytes_per_s);
        st.links[kIntraIn] = w.add_link(p + "nvlink-in", c.intra_node.bandwidth.bytes_per_s);
        st.links[kInterOut] = w.add_link(p + "nic-out", c.inter_node.bandwidth.bytes_per_s);
        st.links[kInterIn] = w.add_link(p + "nic-in", c.inter_node.bandwidth.bytes_per_s);
        for (int l = 0; l < kLinkSlots; ++l) {
          out_.link_is_inter.push_back(l >= kInterOut);
          out_.link_is_egress.push_back(l == kIntraOut || l == kInterOut);
        }
        if (sc_.parallel.offload.enabled()) add_offload_streams(dev, st, p);
        streams_.push_back(st);
        out_.devices.push_back(SimulatedDevice{s, d, r, rank, st.compute, st.host, 0});
      }
    }
  }
}

std::vector<std::size_t> Builder::expert_members(int stage, int d, int r, StepGroup group) const {
  if (dp_sim_ * tp_sim_ == 1) return {index(stage, 0, 0)};  // symmetric: one stands for all
  const auto& p = sc_.parallel;
  const std::vector<int> locals = group == StepGroup::kExpertParallel
                                      ? layout_.expert_parallel_members(d, r, p.expert_tp(), p.ep)
                                  : group == StepGroup::kExpertTensor
                                      ? layout_.expert_tensor_members(d, r, p.expert_tp())
                                      : layout_.expert_grid_members(d, r, p.expert_tp(), p.ep);
  std::vector<std::size_t> out;
  for (int local : locals) out.push_back(index(stage, local / p.tp, local % p.tp));
  return out;
}

std::vector<std::size_t> Builder::expert_data_members(int stage, int d, int r) const {
  if (dp_sim_ * tp_sim_ == 1) return {index(stage, 0, 0)};
  const auto& p = sc_.parallel;
  std::vector<std::size_t> out;
  for (int local : layout_.expert_data_members(d, r, p.expert_tp(), p.ep)) {
    out.push_back(index(stage, local / p.tp, local % p.tp));
  }
  return out;
}

cost::GroupPlacement Builder::expert_data_placement(int stage, int d, int r) const {
  return layout_.expert_data_group(stage, d, r, sc_.parallel.expert_tp(), sc_.parallel.ep);
}

cost::GroupPlacement Builder::expert_placement(int stage, int d, int r, StepGroup group) const {
  const auto& p = sc_.parallel;
  switch (group) {
    case StepGroup::kExpertParallel:
      return layout_.expert_parallel_group(stage, d, r, p.expert_tp(), p.ep);
    case StepGroup::kExpertTensor:
      return layout_.expert_tensor_group(stage, d, r, p.expert_tp());
    default:
      return layout_.expert_grid_group(stage, d, r, p.expert_tp(), p.ep);
  }
}

LayerParams Builder::stage_params(int stage) const {
  LayerParams sum;
  for (int c = 0; c < chunks_; ++c) {
    const int vs = sc_.virtual_stage(stage, c);
    const LayerParams part =
        layers_params_on_rank(sc_.model, sc_.parallel, sc_.first_layer_of_virtual_stage(vs),
                              sc_.virtual_stage_layers(vs));
    sum.dense += part.dense;
    sum.expert += part.expert;
  }
  sum.dense += embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp, stage, sc_.head_stage());
  if (stage == sc_.head_stage()) sum.expert += mtp_params_on_rank(sc_.model, sc_.parallel).expert;
  return sum;
}

QuantizedWeightStep Builder::stage_fp8_weights(int stage) const {
  QuantizedWeightStep sum;
  if (!sc_.training.fp8.enabled()) return sum;
  for (int c = 0; c < chunks_; ++c) {
    const int vs = sc_.virtual_stage(stage, c);
    const int first = sc_.first_layer_of_virtual_stage(vs);
    for (int l = first; l < first + sc_.virtual_stage_layers(vs); ++l) {
      sum.add(program_of(l).fp8_weights);
    }
  }
  if (stage == sc_.head_stage()) sum.add(head_.fp8_weights);  // the MTP modules'
  return sum;
}

void Builder::head_gradients_ready(std::size_t dev, OpId op) {
  gradients_ready_at(dev, op,
                     head_params_per_tp_rank(sc_.model, sc_.parallel.tp, sc_.head_stage()));
  const double mtp_experts = mtp_params_on_rank(sc_.model, sc_.parallel).expert;
  if (mtp_experts > 0) expert_grad_ready_[dev].emplace_back(op, mtp_experts);
}

void Builder::set_base_memory() {
  auto& w = out_.workload;
  const bool mixed = sc_.training.precision != cost::Dtype::kFp32;
  for (sim::DeviceId dev = 0; dev < out_.devices.size(); ++dev) {
    const int s = out_.devices[dev].stage;
    const LayerParams params = stage_params(s);
    // Dense parameters sharded (ZeRO) over the dp x cp replicas, the local experts over the
    // expert data-parallel ranks that hold the same experts (Megatron's distributed optimizer
    // keeps the two apart).
    // FSDP2: fp32 shards of the parameters, their gradients and AdamW's moments over the shard
    // group (fsdp2_units.hpp).
    const auto state =
        sc_.parallel.fsdp2.enabled
            ? fsdp2_model_state_bytes(params.dense, sc_.parallel.fsdp2_shard())
            : cost::model_state_bytes(params.dense, replicas_, sc_.parallel.zero_stage, mixed,
                                      sc_.training.fp32_gradients);
    const auto experts =
        cost::model_state_bytes(params.expert, sc_.model.moe.enabled() ? sc_.parallel.edp() : 1,
                                sc_.parallel.zero_stage, mixed, sc_.training.fp32_gradients);
    double weights = state.weights.value + experts.weights.value;
    double gradients = state.gradients.value + experts.gradients.value;
    double optimizer = state.optimizer.value + experts.optimizer.value;
    if (sc_.parallel.offload.enabled()) {  // the host's share leaves HBM (offload_cost.hpp)
      const auto split = cost::offload_memory(
          sc_.parallel.offload, cost::ModelStateBytes{{weights}, {gradients}, {optimizer}},
          optimizer_shard(s));
      weights = split.hbm.weights.value;
      gradients = split.hbm.gradients.value;
      optimizer = split.hbm.optimizer.value;
      out_.host_memory.push_back(split.host.value);
    }
    if (sc_.parallel.zero_stage == 3 && !sc_.parallel.fsdp2.enabled) {
      // What the framework keeps beyond ZeRO's shards (framework.hpp, Zero3Gathering): the
      // persistent tensors whole on every rank, and the gradient bucket it allocates once (the
      // data-parallel bucket's gradients, or all of the stage's with dp_bucket 0).
      const auto& z3 = sc_.training.framework.zero3;
      const double element = cost::bytes_per_element(sc_.training.precision);
      const double persistent = zero3_persistent_elements(sc_.model, sc_.parallel.tp, z3);
      weights += sc_.stage_layer_count(s) * persistent * element * (replicas_ - 1) / replicas_;
      if (z3.contiguous_gradients) {
        // ZeRO-3's gradients are reduce-scattered layer by layer (zero3_reduce): the buffer
        // holds one layer's, as DeepSpeed's with reduce_bucket_size of one layer (the bucket the
        // DeepSpeed export writes; the scenario's dp_bucket does not apply to ZeRO-3).
        gradients += layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) * element;
      }
    }
    // FP8: the cached copies apart, or the parameters themselves in FP8 (param_gather).
    const double fp8 = fp8_weight_memory_bytes(sc_, stage_fp8_weights(s));
    if (mem_fp8_ != 0) {
      w.set_base_memory(dev, mem_fp8_, static_cast<std::int64_t>(fp8));
    } else {
      weights += fp8;
    }
    w.set_base_memory(dev, mem_weights_, static_cast<std::int64_t>(weights));
    w.set_base_memory(dev, mem_grads_, static_cast<std::int64_t>(gradients));
    if (sc_.optimizer.kind != OptimizerKind::kAdamW) {  // factors and roots of the owned blocks
      optimizer += shampoo_cost(s).state_bytes;
    }
    w.set_base_memory(dev, mem_optimizer_, static_cast<std::int64_t>(optimizer));
    const auto& at = out_.devices[dev];
    out_.non_tensor_memory.push_back(
        device_non_tensor_memory(sc_, layout_, costs_.cluster().fabric, s, at.dp_rank, at.tp_rank));
  }
}

const ShampooStepCost& Builder::shampoo_cost(int stage) {
  if (shampoo_costs_.empty()) shampoo_costs_.resize(static_cast<std::size_t>(pp_));
  auto& cached = shampoo_costs_[static_cast<std::size_t>(stage)];
  if (!cached) cached = shampoo_step_cost(sc_, costs_, stage);
  return *cached;
}

sim::LinkId Builder::p2p_second_link(std::size_t from, std::size_t to,
                                     const cost::CollectivePhase& phase) {
  if (!(phase.rate_cap.bytes_per_s > 0)) return streams_[to].links[kIntraIn];
  auto [it, added] = pair_links_.try_emplace({from, to}, sim::LinkId{});
  if (added) {
    it->second = out_.workload.add_link(
        fmt::format("gpu{}->gpu{}.peer", out_.devices[from].global_rank,
                    out_.devices[to].global_rank),
        phase.rate_cap.bytes_per_s / phase.link_efficiency);  // rate_cap counts delivered bytes
    out_.link_is_inter.push_back(0);
    out_.link_is_egress.push_back(0);  // the sender's port counts the traffic
  }
  return it->second;
}

sim::FlowSpec Builder::phase_flow(std::size_t from, std::size_t to, const cost::CollectivePhase& ph,
                                  bool point_to_point) {
  const bool inter = ph.link == cost::LinkClass::kInterNode;
  const sim::LinkId second = inter            ? streams_[to].links[kInterIn]
                             : point_to_point ? p2p_second_link(from, to, ph)
                                              : streams_[to].links[kIntraIn];
  // x / 1.0 is x exactly, so analytical plans push exactly their bytes.
  const double bytes = ph.bytes_sent_per_rank.value;
  return sim::FlowSpec{{streams_[from].links[inter ? kInterOut : kIntraOut], second},
                       bytes / ph.link_efficiency,
                       bytes,
                       point_to_point ? 0.0 : ph.rate_cap.bytes_per_s / ph.link_efficiency};
}

sim::GroupId Builder::emit_collective(const std::vector<std::size_t>& members,
                                      sim::StreamId DeviceStreams::*stream,
                                      const cost::CollectivePlan& plan, const std::string& label,
                                      sim::LabelId category, int mb, CommKind kind,
                                      int group_size) {
  return emit_collective(members, stream, plan, out_.workload.intern(label), category, mb, kind,
                         group_size);
}

sim::GroupId Builder::emit_collective(const std::vector<std::size_t>& members,
                                      sim::StreamId DeviceStreams::*stream,
                                      const cost::CollectivePlan& plan, sim::LabelId label,
                                      sim::LabelId category, int mb, CommKind kind, int group_size,
                                      std::uint8_t queue) {
  auto& w = out_.workload;
  auto& member_streams = scratch_streams_;
  member_streams.clear();
  for (std::size_t dev : members) member_streams.push_back(streams_[dev].*stream);
  auto& phases = scratch_phases_;
  auto& flows = scratch_flows_;
  phases.clear();
  flows.clear();
  const std::size_t n = members.size();
  const bool p2p = plan.kind == cost::CollectiveKind::kSendRecv;
  for (std::size_t k = 0; k < plan.phases.size(); ++k) {
    const auto& ph = plan.phases[k];
    // Concurrent phases (collective_cost.hpp) are one engine phase: latencies summed, flows
    // started together.
    const bool joins = k > 0 && plan.phases[k - 1].concurrent_with_next;
    if (joins) {
      phases.back().latency += ph.latency;
      phases.back().flows_count += static_cast<std::uint32_t>(n);
    } else {
      phases.push_back(sim::PhaseSpec{ph.latency, 0, static_cast<std::uint32_t>(n)});
    }
    for (std::size_t i = 0; i < n; ++i) {
      // Ring neighbour in member order; in symmetric mode the one member stands for all, so it
      // sends on its egress and receives on its ingress.
      flows.push_back(phase_flow(members[i], members[(i + 1) % n], ph, p2p));
    }
  }
  double per_member = 0;
  for (const auto& ph : plan.phases) per_member += ph.bytes_sent_per_rank.value;
  const sim::GroupId g =
      w.add_group(member_streams, phases, flows, label, category, mb, false, per_member, queue);
  out_.groups.push_back(GroupInfo{kind, plan.kind, plan.message.value, group_size});
  return g;
}

void Builder::emit_steps(int stage, const std::vector<LayerStep>& steps, const std::string& where,
                         sim::LabelId category, int mb, std::vector<OpId>& chain,
                         std::vector<OpId>& first, const std::vector<StepHost>& host) {
  auto& w = out_.workload;
  const std::size_t ranks = chain.size();
  // Ops of each step on each simulated rank, for steps that wait on others than the previous.
  auto& step_ops = scratch_step_ops_;
  step_ops.assign(steps.size() * ranks, kNone);
  auto link = [&](std::size_t k, std::size_t si, OpId op) {
    const LayerStep& step = steps[si];
    if (step.after.empty() || si == 0) {
      if (chain[k] != kNone) w.add_dependency(chain[k], op);
      if (pending_[k] != kNone) {
        w.add_dependency(pending_[k], op);
        pending_[k] = kNone;
      }
    } else {
      for (int j : step.after) {
        w.add_dependency(step_ops[static_cast<std::size_t>(j) * ranks + k], op);
      }
    }
    step_ops[si * ranks + k] = op;
    if (first[k] == kNone) first[k] = op;
    chain[k] = op;
  };
  auto cached = step_labels_.find({&steps, where});
  if (cached == step_labels_.end()) {
    std::vector<sim::LabelId> ids;
    for (const LayerStep& step : steps) {
      ids.push_back(
          w.intern(where + (step.is_collective ? step.collective.label : step.compute.label)));
    }
    cached = step_labels_.emplace(std::make_pair(&steps, where), std::move(ids)).first;
  }
  const std::vector<sim::LabelId>& labels = cached->second;
  for (std::size_t si = 0; si < steps.size(); ++si) {
    const LayerStep& step = steps[si];
    if (!step.is_collective) {
      const sim::LabelId label = labels[si];
      for (int d = 0; d < dp_sim_; ++d) {
        for (int r = 0; r < tp_sim_; ++r) {
          const std::size_t k = static_cast<std::size_t>(d * tp_sim_ + r);
          const std::size_t dev = index(stage, d, r);
          const OpId op =
              w.add_compute(streams_[dev].compute, step.compute.time, label, category, mb, queue_);
          link(k, si, op);
          host_issue(dev, op, host[si], step.compute.last_body, false);
          host_sync(dev, op, step.syncs_after);
        }
      }
      continue;
    }
    if (is_context_parallel(step.group)) {
      // Over the cp ranks of one data-parallel replica (or a2a+p2p's subgroup of them,
      // cp_group_shape), for each TP rank: a ring (send-recv shifts every member's block to the
      // next), an all-gather along the sequence or an all-to-all over heads.
      const int cp = sc_.parallel.cp;
      const CpGroupShape shape = cp_group_shape(sc_.parallel, step.group);
      // Symmetric: replica 0 alone; full: every group of every block of cp replicas.
      const int groups = dp_sim_ == 1 ? 1 : dp_sim_ / shape.size;
      const int members_per_group = dp_sim_ == 1 ? 1 : shape.size;
      const auto member_replica = [&](int g, int c) {
        const int block = g / (cp / shape.size), in_block = g % (cp / shape.size);
        const int lead = shape.stride == 1 ? in_block * shape.size : in_block;
        return block * cp + lead + c * shape.stride;
      };
      for (int g = 0; g < groups; ++g) {
        for (int r = 0; r < tp_sim_; ++r) {
          const cost::GroupPlacement& place =
              cp_place_[static_cast<std::size_t>(stage) * 3 + cp_place_slot(step.group)];
          const auto plan = plan_step(costs_, step.collective, place);
          std::vector<std::size_t> members;
          for (int c = 0; c < members_per_group; ++c) {
            members.push_back(index(stage, dp_sim_ == 1 ? 0 : member_replica(g, c), r));
          }
          const sim::GroupId gid =
              emit_collective(members, &DeviceStreams::cp, plan, labels[si], cat_cp_, mb,
                              CommKind::kContextParallel, shape.size, queue_);
          for (int c = 0; c < members_per_group; ++c) {
            const int d = dp_sim_ == 1 ? 0 : member_replica(g, c);
            const OpId member = w.members(gid)[static_cast<std::size_t>(c)];
            link(static_cast<std::size_t>(d * tp_sim_ + r), si, member);
            host_issue(index(stage, d, r), member, host[si], sim::Time::zero(), true);
            host_sync(index(stage, d, r), member, step.syncs_after);
          }
        }
      }
      continue;
    }
    if (step.group == StepGroup::kExpertParallel || step.group == StepGroup::kExpertTensor ||
        step.group == StepGroup::kExpertGrid) {
      // Each expert group once, from its first simulated member.
      for (int d = 0; d < dp_sim_; ++d) {
        for (int r = 0; r < tp_sim_; ++r) {
          const std::vector<std::size_t> members = expert_members(stage, d, r, step.group);
          if (members.front() != index(stage, d, r)) continue;
          const cost::GroupPlacement place = expert_placement(stage, d, r, step.group);
          const auto plan = plan_step(costs_, step.collective, place);
          const sim::GroupId gid =
              emit_collective(members, &DeviceStreams::ep, plan, labels[si], cat_ep_, mb,
                              CommKind::kExpertParallel, place.size, queue_);
          for (std::size_t i = 0; i < members.size(); ++i) {
            const std::size_t dev = members[i];
            const int dd = out_.devices[dev].dp_rank, rr = out_.devices[dev].tp_rank;
            const OpId member = w.members(gid)[i];
            link(static_cast<std::size_t>(dd * tp_sim_ + rr), si, member);
            host_issue(dev, member, host[si], sim::Time::zero(), true);
            host_sync(dev, member, step.syncs_after);
          }
        }
      }
      continue;
    }
    for (int d = 0; d < dp_sim_; ++d) {
      const cost::GroupPlacement& place =
          tp_place_[static_cast<std::size_t>(stage) * dp_sim_ + static_cast<std::size_t>(d)];
      const auto key =
          std::make_tuple(&step, place.size, place.gpus_per_node_in_group, place.nodes_spanned);
      auto it = plans_.find(key);
      if (it == plans_.end()) {
        it = plans_.emplace(key, plan_step(costs_, step.collective, place)).first;
      }
      const cost::CollectivePlan& plan = it->second;
      std::vector<std::size_t>& members = scratch_members_;
      members.clear();
      for (int r = 0; r < tp_sim_; ++r) members.push_back(index(stage, d, r));
      const sim::GroupId g = emit_collective(
          members, step.group == StepGroup::kWeights ? &DeviceStreams::weights : &DeviceStreams::tp,
          plan, labels[si], cat_tp_, mb, CommKind::kTensorParallel, sc_.parallel.tp, queue_);
      if (step.copy_engine) w.set_copy_engine(g);
      for (int r = 0; r < tp_sim_; ++r) {
        const OpId member = w.members(g)[static_cast<std::size_t>(r)];
        link(static_cast<std::size_t>(d * tp_sim_ + r), si, member);
        host_issue(index(stage, d, r), member, host[si], sim::Time::zero(), true);
        host_sync(index(stage, d, r), member, step.syncs_after);
      }
    }
  }
}

Builder::ActivationBytes Builder::activation_bytes(const LayerProgram& layer) const {
  ActivationBytes a;
  a.stored = layer.activation_stored_bytes;
  a.full = layer.activation_full_bytes;
  a.transient = a.full - a.stored;
  const double tokens = static_cast<double>(sc_.training.micro_batch) * sc_.model.seq_len /
                        sc_.parallel.cp;  // this rank's share of the sequence
  const double logit_elements = tokens * sc_.model.vocab / sc_.parallel.tp;
  a.logits = head_.activation_stored_bytes;  // the logits, and the MTP modules' (head_program)
  a.loss_fp32 = logit_elements * 4.0;
  a.stage_input = tokens * sc_.model.hidden * cost::bytes_per_element(sc_.training.precision) /
                  (sc_.parallel.sequence_parallel ? sc_.parallel.tp : 1);
  return a;
}

PassOps& Builder::item_ops(std::size_t dev, ItemKind kind, int chunk, int mb) {
  const std::size_t k = static_cast<std::size_t>(kind);
  return item_ops_[((dev * 3 + k) * static_cast<std::size_t>(chunks_) +
                    static_cast<std::size_t>(chunk)) *
                       static_cast<std::size_t>(total_mb_) +
                   static_cast<std::size_t>(mb)];
}

BuiltWorkload Builder::build() {
  auto& w = out_.workload;
  cat_fwd_ = w.intern("forward");
  cat_bwd_ = w.intern("backward");
  cat_tp_ = w.intern("tp-comm");
  cat_pp_ = w.intern("pp-comm");
  cat_dp_ = w.intern("dp-comm");
  cat_opt_ = w.intern("optimizer");
  cat_cp_ = w.intern("cp-comm");
  cat_ep_ = w.intern("ep-comm");
  cat_host_ = w.intern("host");
  out_.optimizer_category = cat_opt_;
  out_.device = costs_.device();
  mem_weights_ = w.memory_category("weights");
  mem_grads_ = w.memory_category("gradients");
  mem_optimizer_ = w.memory_category("optimizer state");
  mem_act_ = w.memory_category("activations");
  mem_zero3_ = w.memory_category("zero-3 gathered weights");
  if (sc_.parallel.fsdp2.enabled) {
    mem_fsdp2_params_ = w.memory_category("fsdp2 unsharded parameters");
    mem_fsdp2_grads_ = w.memory_category("fsdp2 gradient buffers");
  }
  // FP8 weight copies Transformer Engine keeps over micro-batches (apart from the weights).
  if (sc_.training.fp8.enabled() && !sc_.training.fp8.param_gather &&
      cost::quant_recipe_info(sc_.training.fp8.recipe).caches_weights) {
    mem_fp8_ = w.memory_category("fp8 weight copies");
  }
  // The estimate is a close upper bound (workload_estimate.hpp); untouched capacity costs
  // address space only, and the cap keeps that bounded.
  constexpr std::size_t kMaxReserve = 16'000'000;
  const std::size_t reserve = std::min(op_estimate_, kMaxReserve);
  w.reserve(reserve, reserve, reserve, reserve);
  // Measured GEMM / all-reduce interference (1 and 1 without a calibrated profile).
  w.set_overlap_slowdown(costs_.compute_slowdown_when_overlapped(),
                         costs_.communication_slowdown_when_overlapped());
  add_devices();
  host_.assign(out_.devices.size(), HostCursor{});
  set_base_memory();
  for (int s = 0; s < pp_; ++s) {
    for (int d = 0; d < dp_sim_; ++d) tp_place_.push_back(layout_.tp_group(s, d));
    // The whole cp group, a2a+p2p's all-to-all group and its ring (cp_place_slot).
    for (StepGroup g :
         {StepGroup::kContextParallel, StepGroup::kContextAllToAll, StepGroup::kContextRing}) {
      const CpGroupShape shape = cp_group_shape(sc_.parallel, g);
      cp_place_.push_back(layout_.replica_strided_group(s, 0, shape.size, shape.stride));
    }
  }
  const std::size_t n = out_.devices.size();
  out_.steps = simulated_steps(sc_.parallel, m_);
  out_.shape = ScheduleShape{sc_.parallel.schedule,        pp_, m_, chunks_, out_.steps.total,
                             sc_.parallel.microbatch_group};
  out_.shape.overlap_pairs = sc_.overlaps_forward_backward();
  iterations_ = !async_ && out_.steps.total > 1;
  total_mb_ = m_ * out_.steps.total;
  std::optional<ZeroBubbleOrder> searched;
  if (is_searched(sc_.parallel.schedule)) searched = searched_order();
  for (int s = 0; s < pp_; ++s) {
    plans_by_stage_.push_back(stage_plan(out_.shape, s, searched ? &*searched : nullptr));
  }
  item_ops_.assign(n * 3 * static_cast<std::size_t>(chunks_) * static_cast<std::size_t>(total_mb_),
                   PassOps{});
  optimizer_ops_.assign(n, {});
  optimizer_host_ops_.assign(n, {});
  optimizer_gathers_.assign(n, {});
  grad_ready_.assign(n, {});
  expert_grad_ready_.assign(n, {});
  bucket_scaled_.assign(n, {});
  final_backward_.assign(n, kNone);
  fsdp2_held_.assign(n, {});
  fsdp2_accumulating_.assign(n, {});
  fsdp2_reduced_.assign(n, {});
  offload_pending_.assign(n, {});
  offload_cpu_step_.assign(n, kNone);
  offload_buckets_.assign(n, {});
  for (int s = 0; s < pp_; ++s) emit_stage(s);
  emit_p2p();
  if (!async_ && !iterations_) {  // several iterations: emitted at each iteration's end
    for (int s = 0; s < pp_; ++s) emit_data_parallel(s);
  }

  // FLOPs per step for the whole cluster: each simulated program stands for dp*tp/(dp_sim*tp_sim)
  // GPUs.
  out_.full = dp_sim_ * tp_sim_ == replicas_ * sc_.parallel.tp;  // replicas = dp x cp
  out_.gpus_per_simulated_device =
      static_cast<double>(replicas_) * sc_.parallel.tp / (dp_sim_ * tp_sim_);
  auto executed = [](const std::vector<LayerStep>& steps) {
    cost::Flops f;
    for (const auto& s : steps) {
      if (!s.is_collective) f += s.compute.flops;
    }
    return f;
  };
  const double gpus_per_stage = static_cast<double>(replicas_) * sc_.parallel.tp;
  // Every layer runs once per micro-batch, whichever stage holds it; MoE layers count the
  // busiest rank's expert FLOPs for every rank (model FLOPs above the active parameters' by
  // the imbalance: what the step's time pays for).
  const int moe_layers = sc_.model.moe.moe_layers_in(0, sc_.model.layers);
  const double dense_layers =
      static_cast<double>(sc_.model.layers - moe_layers) * m_ * gpus_per_stage;
  const double expert_layers = static_cast<double>(moe_layers) * m_ * gpus_per_stage;
  out_.model_flops_per_step = cost::Flops{
      dense_layers * layer_.model_flops.value + expert_layers * moe_layer_.model_flops.value +
      m_ * gpus_per_stage * (embed_.model_flops.value + head_.model_flops.value)};
  const bool paci_mem =
      sc_.parallel.schedule == PipelineSchedule::kPaci && sc_.parallel.paci_mode == PaciMode::kMem;
  auto layer_executed = [&](const LayerProgram& l) {
    return (executed(l.forward) + executed(l.backward)).value +
           (paci_mem ? executed(l.forward).value : 0.0);
  };
  // Block and every-nth recompute rerun some layers only (checkpoint_groups.hpp).
  double dense_executed = dense_layers * layer_executed(layer_);
  if (has_plain_layers(sc_.training)) {
    int rerun = 0;
    for (int vs = 0; vs < pp_ * chunks_; ++vs) {
      rerun += rerun_layers(stage_checkpoints(sc_.training, sc_.virtual_stage_layers(vs)));
    }
    const double per_layer = static_cast<double>(m_) * gpus_per_stage;
    dense_executed = rerun * per_layer * layer_executed(layer_) +
                     (sc_.model.layers - rerun) * per_layer * layer_executed(plain_layer_);
  }
  out_.executed_flops_per_step = cost::Flops{
      dense_executed + (moe_layers > 0 ? expert_layers * layer_executed(moe_layer_) : 0.0) +
      m_ * gpus_per_stage *
          (executed(embed_.forward) + executed(embed_.backward) + executed(head_.forward) +
           executed(head_.backward))
              .value};
  if (sc_.training.fp8.enabled()) {
    for (int stage = 0; stage < pp_; ++stage) {  // per GPU of the stage, per step
      const QuantizedWeightStep fp8 = stage_fp8_weights(stage);
      out_.fp8_quantization_s.push_back(m_ * fp8.micro_batch_kernels.to_seconds() +
                                        fp8.time.to_seconds());
    }
  }
  return std::move(out_);
}

}  // namespace parasim::strat::detail

namespace parasim::strat {

using detail::Builder;

const char* comm_kind_name(CommKind kind) {
  switch (kind) {
    case CommKind::kTensorParallel:
      return "tp";
    case CommKind::kPipeline:
      return "pp";
    case CommKind::kDataParallel:
      return "dp";
    case CommKind::kContextParallel:
      return "cp";
    case CommKind::kExpertParallel:
      return "ep";
  }
  return "?";
}

BuiltWorkload build_workload(const Scenario& scenario, const cost::CostModel& costs,
                             const BuildOptions& options) {
  const cost::ClusterSpec& c = costs.cluster();
  if (c.gpus_per_node != scenario.cluster.gpus_per_node || c.nodes != scenario.cluster.nodes) {
    throw std::invalid_argument(fmt::format(
        "the cost model's cluster ({} x {} GPUs) is not the scenario's ({} x {}); make the cost "
        "model from the scenario's cluster (cost::make_cost_model)",
        c.nodes, c.gpus_per_node, scenario.cluster.nodes, scenario.cluster.gpus_per_node));
  }
  cost::Diagnostics limits(scenario.source_file.empty() ? scenario.name : scenario.source_file);
  const WorkloadEstimate e = check_workload_limits(scenario, options.full, options.limits, limits);
  if (!limits.ok()) throw cost::InputError(std::move(limits));
  return Builder(scenario, costs, options, static_cast<std::size_t>(e.ops)).build();
}

}  // namespace parasim::strat
