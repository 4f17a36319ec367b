#include "strategies/workload_builder.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "costmodel/model_state_memory.hpp"
#include "strategies/layer_program.hpp"
#include "strategies/optimizer_adamw.hpp"
#include "strategies/pipeline_schedule.hpp"
#include "strategies/rank_layout.hpp"

namespace parasim::strat {
namespace {

using sim::kNone;
using sim::OpId;

enum LinkSlot { kIntraOut, kIntraIn, kInterOut, kInterIn, kLinkSlots };

struct DeviceStreams {
  sim::StreamId compute, tp, dp, cp, weights;
  std::vector<sim::StreamId> recv_fwd, recv_bwd, send_fwd, send_bwd;  // per model chunk
  std::array<sim::LinkId, kLinkSlots> links;
};

// The rank layout sees dp x cp replicas (Megatron's order tp-cp-dp-pp: cp ranks are adjacent).
ParallelSpec replica_spec(ParallelSpec p) {
  p.dp *= p.cp;
  return p;
}

// First and last op of one pipeline item on one device.
struct PassOps {
  OpId first = kNone;
  OpId last = kNone;
};

class Builder {
 public:
  Builder(const Scenario& sc, const cost::CostModel& costs, const BuildOptions& options,
          std::size_t op_estimate)
      : op_estimate_(op_estimate),
        sc_(sc),
        costs_(costs),
        layout_(replica_spec(sc.parallel), sc.cluster.gpus_per_node),
        replicas_(sc.replicas()),
        dp_sim_(options.full ? sc.replicas() : 1),
        tp_sim_(options.full ? sc.parallel.tp : 1),
        pp_(sc.parallel.pp),
        m_(sc.micro_batches()),
        chunks_(sc.parallel.chunks),
        async_(is_asynchronous(sc.parallel.schedule)),
        split_(splits_weight_gradient(sc.parallel.schedule)),
        layers_(sc.layers_per_stage()),
        layer_(transformer_layer_program(sc, costs)),
        embed_(embedding_program(sc, costs)),
        head_(head_program(sc, costs)) {}

  BuiltWorkload build();

 private:
  // Index of the simulated device of (stage, dp, tp) among the simulated ones.
  std::size_t index(int stage, int d, int r) const {
    return (static_cast<std::size_t>(stage) * dp_sim_ + d) * tp_sim_ + r;
  }
  void add_devices();
  void set_base_memory();
  struct ActivationBytes;
  ActivationBytes activation_bytes() const;
  PassOps& item_ops(std::size_t dev, ItemKind kind, int chunk, int mb);
  void emit_stage(int stage);
  void emit_item(int stage, const PipelineItem& item, bool final_pass, std::vector<OpId>& chain);
  sim::Time stage_optimizer_time(int stage) const;
  // Emits `steps` on every simulated (dp, tp) rank of `stage`, each chained after chain[k]
  // (k = d * tp_sim + r); sets first[k] to the first op emitted when it is still unset.
  void emit_steps(int stage, const std::vector<LayerStep>& steps, const std::string& where,
                  sim::LabelId category, int mb, std::vector<OpId>& chain,
                  std::vector<OpId>& first);
  // ZeRO-3: all-gather one layer's weights over the data-parallel group before it runs; the
  // gather may start once prefetch_after[k] has finished (one layer ahead).
  void zero3_gather(int stage, int mb, const std::string& where,
                    const std::vector<OpId>& prefetch_after);
  void zero3_reduce(int stage, int mb, const std::string& where, const std::vector<OpId>& chain);
  sim::GroupId emit_collective(const std::vector<std::size_t>& members, sim::StreamId DeviceStreams::*stream,
                               const cost::CollectivePlan& plan, const std::string& label,
                               sim::LabelId category, int mb, CommKind kind, int group_size);
  sim::GroupId emit_collective(const std::vector<std::size_t>& members, sim::StreamId DeviceStreams::*stream,
                               const cost::CollectivePlan& plan, sim::LabelId label,
                               sim::LabelId category, int mb, CommKind kind, int group_size,
                               std::uint8_t queue = 0);
  void emit_p2p();
  void emit_data_parallel(int stage);
  void alloc(OpId op, std::uint8_t category, double bytes, bool at_start);

  std::size_t op_estimate_;
  const Scenario& sc_;
  const cost::CostModel& costs_;
  RankLayout layout_;
  int replicas_;  // dp x cp: GPUs of a stage holding the same weights
  int dp_sim_, tp_sim_, pp_, m_, chunks_;
  bool async_, split_;
  int layers_;
  int total_mb_ = 0;      // micro-batches over all simulated steps
  std::uint8_t queue_ = 0;  // queue of the item being emitted
  std::vector<StagePlan> plans_by_stage_;
  std::vector<PassOps> item_ops_;                 // see item_ops()
  std::vector<std::vector<OpId>> optimizer_ops_;  // per device, stage-local steps in order
  LayerProgram layer_, embed_, head_;
  BuiltWorkload out_;
  std::vector<DeviceStreams> streams_;
  // [device][k]: last op of the backward of parameter chunk k (head, layers L-1..0, embedding)
  // for the micro-batch whose backward runs last.
  std::vector<std::vector<std::pair<OpId, double>>> grad_ready_;
  std::vector<OpId> final_backward_;  // per device: last backward op of the step
  std::vector<OpId> pending_;         // per (d, r) of the stage being emitted: extra dependency
  // Caches: the same (where, steps) and (step, placement) repeat for every micro-batch.
  std::map<std::pair<const std::vector<LayerStep>*, std::string>, std::vector<sim::LabelId>>
      step_labels_;
  std::map<std::tuple<const LayerStep*, int, int, int>, cost::CollectivePlan> plans_;
  std::vector<sim::StreamId> scratch_streams_;
  std::vector<sim::PhaseSpec> scratch_phases_;
  std::vector<sim::FlowSpec> scratch_flows_;
  std::vector<std::size_t> scratch_members_;
  std::vector<cost::GroupPlacement> tp_place_;  // per (stage, dp rank)
  std::vector<cost::GroupPlacement> cp_place_;  // per stage: the cp group of replica 0
  std::vector<OpId> scratch_step_ops_;
  sim::LabelId cat_fwd_ = 0, cat_bwd_ = 0, cat_tp_ = 0, cat_pp_ = 0, cat_dp_ = 0, cat_opt_ = 0,
               cat_cp_ = 0;
  std::uint8_t mem_weights_ = 0, mem_grads_ = 0, mem_optimizer_ = 0, mem_act_ = 0, mem_zero3_ = 0;
};

void Builder::alloc(OpId op, std::uint8_t category, double bytes, bool at_start) {
  const auto b = static_cast<std::int64_t>(bytes);
  if (at_start) out_.workload.set_memory(op, category, b, 0);
  else out_.workload.set_memory(op, category, 0, -b);
}

void Builder::add_devices() {
  auto& w = out_.workload;
  const auto& c = sc_.cluster;
  for (int s = 0; s < pp_; ++s) {
    for (int d = 0; d < dp_sim_; ++d) {
      for (int r = 0; r < tp_sim_; ++r) {
        const int rank = layout_.rank(s, d, r);
        const std::string name =
            tp_sim_ * dp_sim_ == 1 ? fmt::format("stage {} (gpu {})", s, rank)
                                   : fmt::format("gpu {} (pp {} dp {} tp {})", rank, s, d, r);
        const sim::DeviceId dev = w.add_device(name);
        DeviceStreams st{};
        st.compute = w.add_stream(dev, "compute");
        st.tp = w.add_stream(dev, "tp-comm");
        for (int chunk = 0; chunk < chunks_; ++chunk) {
          const std::string suffix = chunks_ > 1 ? fmt::format(" c{}", chunk) : std::string();
          st.recv_fwd.push_back(w.add_stream(dev, "pp-recv-fwd" + suffix));
          st.recv_bwd.push_back(w.add_stream(dev, "pp-recv-bwd" + suffix));
          st.send_fwd.push_back(w.add_stream(dev, "pp-send-fwd" + suffix));
          st.send_bwd.push_back(w.add_stream(dev, "pp-send-bwd" + suffix));
        }
        st.dp = w.add_stream(dev, "dp-comm");
        st.cp = sc_.parallel.cp > 1 ? w.add_stream(dev, "cp-comm") : st.tp;
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
        streams_.push_back(st);
        out_.devices.push_back(SimulatedDevice{s, d, r, rank, st.compute});
      }
    }
  }
}

void Builder::set_base_memory() {
  auto& w = out_.workload;
  const bool mixed = sc_.training.precision != cost::Dtype::kFp32;
  for (sim::DeviceId dev = 0; dev < out_.devices.size(); ++dev) {
    const int s = out_.devices[dev].stage;
    const double params = layers_ * layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) +
                          embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp, s, pp_);
    const auto state =
        cost::model_state_bytes(params, replicas_, sc_.parallel.zero_stage, mixed);
    w.set_base_memory(dev, mem_weights_, static_cast<std::int64_t>(state.weights.value));
    w.set_base_memory(dev, mem_grads_, static_cast<std::int64_t>(state.gradients.value));
    w.set_base_memory(dev, mem_optimizer_, static_cast<std::int64_t>(state.optimizer.value));
  }
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
                                      sim::LabelId category, int mb, CommKind kind,
                                      int group_size, std::uint8_t queue) {
  auto& w = out_.workload;
  auto& member_streams = scratch_streams_;
  member_streams.clear();
  for (std::size_t dev : members) member_streams.push_back(streams_[dev].*stream);
  auto& phases = scratch_phases_;
  auto& flows = scratch_flows_;
  phases.clear();
  flows.clear();
  const std::size_t n = members.size();
  for (const auto& ph : plan.phases) {
    const bool inter = ph.link == cost::LinkClass::kInterNode;
    phases.push_back(sim::PhaseSpec{ph.latency, 0, static_cast<std::uint32_t>(n)});
    for (std::size_t i = 0; i < n; ++i) {
      // Ring neighbour in member order; in symmetric mode the one member stands for all, so it
      // sends on its egress and receives on its ingress.
      const auto& from = streams_[members[i]].links;
      const auto& to = streams_[members[(i + 1) % n]].links;
      flows.push_back(sim::FlowSpec{{from[inter ? kInterOut : kIntraOut],
                                     to[inter ? kInterIn : kIntraIn]},
                                    ph.bytes_sent_per_rank.value});
    }
  }
  double per_member = 0;
  for (const auto& ph : plan.phases) per_member += ph.bytes_sent_per_rank.value;
  const sim::GroupId g = w.add_group(member_streams, phases, flows, label, category, mb,
                                     false, per_member, queue);
  out_.groups.push_back(GroupInfo{kind, plan.kind, plan.message.value, group_size});
  return g;
}

void Builder::emit_steps(int stage, const std::vector<LayerStep>& steps, const std::string& where,
                         sim::LabelId category, int mb, std::vector<OpId>& chain,
                         std::vector<OpId>& first) {
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
      ids.push_back(w.intern(where + (step.is_collective ? step.collective.label : step.compute.label)));
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
          link(k, si, w.add_compute(streams_[index(stage, d, r)].compute, step.compute.time, label,
                                    category, mb, queue_));
        }
      }
      continue;
    }
    if (step.group == StepGroup::kContextParallel) {
      // Over the cp ranks of one data-parallel replica, for each TP rank: a ring (send-recv
      // shifts every member's block to the next) or an all-gather along the sequence.
      const int cp = sc_.parallel.cp;
      const int groups = std::max(1, dp_sim_ / cp);
      const int members_per_group = dp_sim_ / groups;
      for (int g = 0; g < groups; ++g) {
        for (int r = 0; r < tp_sim_; ++r) {
          const cost::GroupPlacement& place = cp_place_[static_cast<std::size_t>(stage)];
          const auto plan =
              costs_.collective(step.collective.kind, step.collective.message, place);
          std::vector<std::size_t> members;
          for (int c = 0; c < members_per_group; ++c) members.push_back(index(stage, g * members_per_group + c, r));
          const sim::GroupId gid = emit_collective(members, &DeviceStreams::cp, plan, labels[si],
                                                   cat_cp_, mb, CommKind::kContextParallel, cp,
                                                   queue_);
          for (int c = 0; c < members_per_group; ++c) {
            const int d = g * members_per_group + c;
            link(static_cast<std::size_t>(d * tp_sim_ + r), si,
                 w.members(gid)[static_cast<std::size_t>(c)]);
          }
        }
      }
      continue;
    }
    for (int d = 0; d < dp_sim_; ++d) {
      const cost::GroupPlacement& place =
          tp_place_[static_cast<std::size_t>(stage) * dp_sim_ + static_cast<std::size_t>(d)];
      const auto key = std::make_tuple(&step, place.size, place.gpus_per_node_in_group,
                                       place.nodes_spanned);
      auto it = plans_.find(key);
      if (it == plans_.end()) {
        it = plans_.emplace(key, costs_.collective(step.collective.kind, step.collective.message,
                                                   place)).first;
      }
      const cost::CollectivePlan& plan = it->second;
      std::vector<std::size_t>& members = scratch_members_;
      members.clear();
      for (int r = 0; r < tp_sim_; ++r) members.push_back(index(stage, d, r));
      const sim::GroupId g = emit_collective(
          members, step.group == StepGroup::kWeights ? &DeviceStreams::weights : &DeviceStreams::tp,
          plan, labels[si], cat_tp_, mb, CommKind::kTensorParallel, sc_.parallel.tp, queue_);
      for (int r = 0; r < tp_sim_; ++r) {
        link(static_cast<std::size_t>(d * tp_sim_ + r), si,
             w.members(g)[static_cast<std::size_t>(r)]);
      }
    }
  }
}

void Builder::zero3_gather(int stage, int mb, const std::string& where,
                           const std::vector<OpId>& prefetch_after) {
  auto& w = out_.workload;
  const double layer_bytes = layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) *
                             cost::bytes_per_element(sc_.training.precision);
  const double dp = replicas_;
  for (int r = 0; r < tp_sim_; ++r) {
    const auto plan = costs_.collective(cost::CollectiveKind::kAllGather, cost::Bytes{layer_bytes},
                                        layout_.dp_group(stage, r));
    std::vector<std::size_t> members;
    for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
    const sim::GroupId g = emit_collective(members, &DeviceStreams::dp, plan,
                                           where + "zero3 all-gather", cat_dp_, mb,
                                           CommKind::kDataParallel, replicas_);
    for (int d = 0; d < dp_sim_; ++d) {
      const std::size_t k = static_cast<std::size_t>(d * tp_sim_ + r);
      const OpId op = w.members(g)[static_cast<std::size_t>(d)];
      if (prefetch_after[k] != kNone) w.add_dependency(prefetch_after[k], op);
      alloc(op, mem_zero3_, layer_bytes * (dp - 1) / dp, true);
      pending_[k] = op;  // the layer's first op waits for its weights
    }
  }
}

void Builder::zero3_reduce(int stage, int mb, const std::string& where,
                           const std::vector<OpId>& chain) {
  auto& w = out_.workload;
  const double grad_bytes = layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) *
                            cost::bytes_per_element(sc_.training.precision);
  for (int r = 0; r < tp_sim_; ++r) {
    const auto plan = costs_.collective(cost::CollectiveKind::kReduceScatter,
                                        cost::Bytes{grad_bytes}, layout_.dp_group(stage, r));
    std::vector<std::size_t> members;
    for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
    const sim::GroupId g = emit_collective(members, &DeviceStreams::dp, plan,
                                           where + "zero3 reduce-scatter", cat_dp_, mb,
                                           CommKind::kDataParallel, replicas_);
    for (int d = 0; d < dp_sim_; ++d) {
      w.add_dependency(chain[static_cast<std::size_t>(d * tp_sim_ + r)],
                       w.members(g)[static_cast<std::size_t>(d)]);
    }
  }
}

// Memory an item allocates and frees, per simulated rank (bytes).
struct Builder::ActivationBytes {
  double stored = 0;     // kept from a layer's forward to its backward
  double transient = 0;  // re-materialised inside a layer's backward (recompute)
  double full = 0;       // every activation of a layer (recompute none)
  double logits = 0;     // head logits and loss inputs, to the head's backward
  double loss_fp32 = 0;  // the fp32 part of `logits` (loss inputs), no longer needed after B
  double stage_input = 0;  // PACI mem mode: the only thing a forward keeps
};

Builder::ActivationBytes Builder::activation_bytes() const {
  ActivationBytes a;
  a.stored = layer_.activation_stored_bytes;
  a.full = layer_.activation_full_bytes;
  a.transient = a.full - a.stored;
  const double tokens = static_cast<double>(sc_.training.micro_batch) * sc_.model.seq_len /
                        sc_.parallel.cp;  // this rank's share of the sequence
  const double logit_elements = tokens * sc_.model.vocab / sc_.parallel.tp;
  a.logits = logit_elements * (cost::bytes_per_element(sc_.training.precision) + 4.0);
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

void Builder::emit_stage(int stage) {
  const std::size_t ranks = static_cast<std::size_t>(dp_sim_ * tp_sim_);
  const StagePlan& plan = plans_by_stage_[static_cast<std::size_t>(stage)];
  // One fixed order: items follow each other on the compute chain. Several queues: each item
  // stands alone and the streams' priority rule orders them at run time.
  bool dynamic = false;
  for (const auto& item : plan.items) dynamic = dynamic || item.queue != 0;
  std::vector<OpId> chain(ranks, kNone);
  pending_.assign(ranks, kNone);
  // For gradient buckets (flush schedules): the last backward-type item of each chunk.
  std::vector<int> last_grad_item(static_cast<std::size_t>(chunks_), -1);
  const ItemKind grad_kind = split_ ? ItemKind::kWeightGrad : ItemKind::kBackward;
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    if (plan.items[i].kind == grad_kind) last_grad_item[static_cast<std::size_t>(plan.items[i].chunk)] = static_cast<int>(i);
  }
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    const PipelineItem& item = plan.items[i];
    if (dynamic) chain.assign(ranks, kNone);
    const bool final_pass =
        !async_ && static_cast<int>(i) == last_grad_item[static_cast<std::size_t>(item.chunk)];
    emit_item(stage, item, final_pass, chain);
  }
  // Cross-item dependencies: a backward needs its forward, a weight gradient its backward, an
  // optimizer step the backward before it, a gated forward the release of an earlier one.
  for (int d = 0; d < dp_sim_; ++d) {
    for (int r = 0; r < tp_sim_; ++r) {
      const std::size_t dev = index(stage, d, r);
      int forwards = 0;
      OpId last_backward = kNone;
      for (const auto& item : plan.items) {
        auto& w = out_.workload;
        switch (item.kind) {
          case ItemKind::kForward: {
            const auto& f = item_ops(dev, ItemKind::kForward, item.chunk, item.micro_batch);
            const int released = forwards++ - plan.gate_in_flight;
            if (plan.gate_in_flight > 0 && released >= 0) {
              w.add_dependency(item_ops(dev, plan.gate_release, item.chunk, released).last, f.first);
            }
            break;
          }
          case ItemKind::kBackward: {
            const auto& b = item_ops(dev, ItemKind::kBackward, item.chunk, item.micro_batch);
            w.add_dependency(item_ops(dev, ItemKind::kForward, item.chunk, item.micro_batch).last,
                             b.first);
            last_backward = b.last;
            break;
          }
          case ItemKind::kWeightGrad:
            w.add_dependency(item_ops(dev, ItemKind::kBackward, item.chunk, item.micro_batch).last,
                             item_ops(dev, ItemKind::kWeightGrad, item.chunk, item.micro_batch).first);
            break;
          case ItemKind::kOptimizer:
            w.add_dependency(last_backward, optimizer_ops_[dev][static_cast<std::size_t>(item.step - 1)]);
            break;
        }
      }
    }
  }
}

void Builder::emit_item(int stage, const PipelineItem& item, bool final_pass,
                        std::vector<OpId>& chain) {
  const std::size_t ranks = chain.size();
  const int mb = item.micro_batch;
  queue_ = item.queue;
  std::vector<OpId> first(ranks, kNone);
  auto for_each_rank = [&](auto&& fn) {
    for (int d = 0; d < dp_sim_; ++d) {
      for (int r = 0; r < tp_sim_; ++r) fn(static_cast<std::size_t>(d * tp_sim_ + r), d, r);
    }
  };
  auto record = [&]() {
    for_each_rank([&](std::size_t k, int d, int r) {
      const std::size_t dev = index(stage, d, r);
      if (item.kind != ItemKind::kOptimizer) item_ops(dev, item.kind, item.chunk, mb) = {first[k], chain[k]};
      out_.spans.push_back(PipelineSpan{static_cast<sim::DeviceId>(dev), first[k], chain[k],
                                        item.kind, mb, item.chunk, item.step});
      if (item.kind != ItemKind::kForward && item.kind != ItemKind::kOptimizer) {
        final_backward_[dev] = chain[k];
      }
    });
  };
  if (item.kind == ItemKind::kOptimizer) {
    auto& w = out_.workload;
    for_each_rank([&](std::size_t k, int d, int r) {
      const std::size_t dev = index(stage, d, r);
      const OpId op = w.add_compute(streams_[dev].compute, stage_optimizer_time(stage),
                                    w.intern("optimizer step"), cat_opt_, item.step, queue_);
      optimizer_ops_[dev].push_back(op);
      first[k] = op;
      chain[k] = op;
    });
    record();
    return;
  }
  const int vstage = item.chunk * pp_ + stage;
  const int last_vstage = pp_ * chunks_ - 1;
  const int lc = sc_.layers_per_chunk();
  const bool zero3 = sc_.parallel.zero_stage == 3;
  const bool paci_mem = sc_.parallel.schedule == PipelineSchedule::kPaci &&
                        sc_.parallel.paci_mode == PaciMode::kMem;
  const ActivationBytes act = activation_bytes();
  const double layer_bytes = layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) *
                             cost::bytes_per_element(sc_.training.precision);
  const double zero3_buffer = layer_bytes * (replicas_ - 1) / replicas_;
  std::vector<OpId> prev_layer_first = chain;

  if (item.kind == ItemKind::kForward) {
    if (vstage == 0) emit_steps(stage, embed_.forward, "F embed ", cat_fwd_, mb, chain, first);
    for (int l = 0; l < lc; ++l) {
      const std::string where = fmt::format("F L{} ", vstage * lc + l);
      if (zero3) zero3_gather(stage, mb, where, prev_layer_first);
      std::vector<OpId> layer_first(ranks, kNone);
      emit_steps(stage, layer_.forward, where, cat_fwd_, mb, chain, layer_first);
      for_each_rank([&](std::size_t k, int, int) {
        if (paci_mem) {
          if (l == 0) alloc(layer_first[k], mem_act_, act.stage_input, true);
        } else {
          alloc(layer_first[k], mem_act_, act.stored, true);
        }
        if (zero3) alloc(chain[k], mem_zero3_, zero3_buffer, false);
        if (first[k] == kNone) first[k] = layer_first[k];
      });
      prev_layer_first = layer_first;
    }
    if (vstage == last_vstage) {
      std::vector<OpId> head_first(ranks, kNone);
      emit_steps(stage, head_.forward, "F ", cat_fwd_, mb, chain, head_first);
      for_each_rank([&](std::size_t k, int, int) {
        alloc(head_first[k], mem_act_, act.logits, true);
        if (first[k] == kNone) first[k] = head_first[k];
      });
    }
    record();
    return;
  }

  if (item.kind == ItemKind::kWeightGrad) {
    // Zero-bubble W: the weight-gradient GEMMs; the activations they read are freed here.
    if (vstage == last_vstage) {
      emit_steps(stage, head_.weight_grad, "W ", cat_bwd_, mb, chain, first);
      for_each_rank([&](std::size_t k, int d, int r) {
        alloc(chain[k], mem_act_, act.logits - act.loss_fp32, false);  // the rest freed after B
        if (final_pass) {
          grad_ready_[index(stage, d, r)].emplace_back(
              chain[k], head_params_per_tp_rank(sc_.model, sc_.parallel.tp, pp_));
        }
      });
    }
    for (int l = lc - 1; l >= 0; --l) {
      emit_steps(stage, layer_.weight_grad, fmt::format("W L{} ", vstage * lc + l), cat_bwd_, mb,
                 chain, first);
      for_each_rank([&](std::size_t k, int d, int r) {
        alloc(chain[k], mem_act_, act.stored, false);
        if (final_pass) {
          grad_ready_[index(stage, d, r)].emplace_back(
              chain[k], layer_params_per_tp_rank(sc_.model, sc_.parallel.tp));
        }
      });
    }
    if (vstage == 0) {
      emit_steps(stage, embed_.weight_grad, "W embed ", cat_bwd_, mb, chain, first);
      if (final_pass) {
        for_each_rank([&](std::size_t k, int d, int r) {
          grad_ready_[index(stage, d, r)].emplace_back(
              chain[k], input_embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp));
        });
      }
    }
    record();
    return;
  }

  // Backward (the input-gradient half only when weight gradients are split off).
  const auto& layer_bwd = split_ ? layer_.backward_input : layer_.backward;
  const auto& head_bwd = split_ ? head_.backward_input : head_.backward;
  if (vstage == last_vstage) {
    emit_steps(stage, head_bwd, "B ", cat_bwd_, mb, chain, first);
    for_each_rank([&](std::size_t k, int d, int r) {
      // With a B/W split, W still needs the logit gradients (bf16); the fp32 loss inputs go now.
      alloc(chain[k], mem_act_, split_ ? act.loss_fp32 : act.logits, false);
      if (final_pass && !split_) {
        grad_ready_[index(stage, d, r)].emplace_back(
            chain[k], head_params_per_tp_rank(sc_.model, sc_.parallel.tp, pp_));
      }
    });
  }
  if (paci_mem) {
    // PACI mem mode: the stage's forward runs again (without its head) before the backward.
    for (int l = 0; l < lc; ++l) {
      std::vector<OpId> layer_first(ranks, kNone);
      emit_steps(stage, layer_.forward, fmt::format("recompute L{} ", vstage * lc + l), cat_bwd_,
                 mb, chain, layer_first);
      for_each_rank([&](std::size_t k, int, int) {
        alloc(layer_first[k], mem_act_, act.full, true);
        if (first[k] == kNone) first[k] = layer_first[k];
      });
    }
  }
  // ZeRO-3: a layer's gradient reduce-scatter is queued on the dp stream after the next layer's
  // weight gather, so that the gather (prefetch) is not stuck behind it.
  std::string reduce_where;
  std::vector<OpId> reduce_after;
  for (int l = lc - 1; l >= 0; --l) {
    const std::string where = fmt::format("B L{} ", vstage * lc + l);
    if (zero3) {
      zero3_gather(stage, mb, where, prev_layer_first);
      if (!reduce_after.empty()) zero3_reduce(stage, mb, reduce_where, reduce_after);
    }
    std::vector<OpId> layer_first(ranks, kNone);
    emit_steps(stage, layer_bwd, where, cat_bwd_, mb, chain, layer_first);
    for_each_rank([&](std::size_t k, int d, int r) {
      if (paci_mem) {
        alloc(chain[k], mem_act_, act.full, false);
      } else {
        if (act.transient > 0) {
          alloc(layer_first[k], mem_act_, act.transient, true);
          alloc(chain[k], mem_act_, act.transient, false);
        }
        if (!split_) alloc(chain[k], mem_act_, act.stored, false);
      }
      if (zero3) alloc(chain[k], mem_zero3_, zero3_buffer, false);
      if (first[k] == kNone) first[k] = layer_first[k];
      if (final_pass && !zero3 && !split_) {
        grad_ready_[index(stage, d, r)].emplace_back(
            chain[k], layer_params_per_tp_rank(sc_.model, sc_.parallel.tp));
      }
    });
    if (zero3) {
      reduce_where = where;
      reduce_after = chain;
    }
    prev_layer_first = layer_first;
  }
  if (!reduce_after.empty()) zero3_reduce(stage, mb, reduce_where, reduce_after);
  if (paci_mem) {
    for_each_rank([&](std::size_t k, int, int) { alloc(chain[k], mem_act_, act.stage_input, false); });
  }
  if (vstage == 0 && split_) {
    // The embedding's input-gradient part is only its collective (SP all-gather), if any.
    emit_steps(stage, embed_.backward_input, "B embed ", cat_bwd_, mb, chain, first);
  }
  if (vstage == 0 && !split_) {
    emit_steps(stage, embed_.backward, "B embed ", cat_bwd_, mb, chain, first);
    if (final_pass) {
      for_each_rank([&](std::size_t k, int d, int r) {
        grad_ready_[index(stage, d, r)].emplace_back(
            chain[k], input_embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp));
      });
    }
  }
  record();
}

sim::Time Builder::stage_optimizer_time(int stage) const {
  const bool mixed = sc_.training.precision != cost::Dtype::kFp32;
  const double params = layers_ * layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) +
                        embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp, stage, pp_);
  const double updated = sc_.parallel.zero_stage >= 1 ? params / replicas_ : params;
  return costs_.memory_bound(cost::Bytes{adamw_step_bytes(updated, mixed)});
}

void Builder::emit_p2p() {
  auto& w = out_.workload;
  const double bytes = static_cast<double>(sc_.training.micro_batch) * sc_.model.seq_len /
                       sc_.parallel.cp * sc_.model.hidden *
                       cost::bytes_per_element(sc_.training.precision) /
                       sc_.parallel.tp;  // Megatron's scatter-gather: each TP rank sends 1/t
  const auto& c = sc_.cluster;
  const int virtual_stages = pp_ * chunks_;
  for (int vs = 0; vs + 1 < virtual_stages; ++vs) {
    const int s = vs % pp_, chunk = vs / pp_;
    const int s_next = (vs + 1) % pp_, chunk_next = (vs + 1) / pp_;
    for (int d = 0; d < dp_sim_; ++d) {
      for (int r = 0; r < tp_sim_; ++r) {
        const std::size_t a = index(s, d, r), b = index(s_next, d, r);
        const bool inter = layout_.node(layout_.rank(s, d, r)) !=
                           layout_.node(layout_.rank(s_next, d, r));
        const sim::Time latency = inter ? c.inter_node.latency : c.intra_node.latency;
        auto transfer = [&](std::size_t from, std::size_t to, sim::StreamId send,
                            sim::StreamId recv, const char* label, int mb) {
          const std::array<sim::StreamId, 2> members{send, recv};
          const std::array<sim::PhaseSpec, 1> phases{sim::PhaseSpec{latency, 0, 1}};
          const std::array<sim::FlowSpec, 1> flows{sim::FlowSpec{
              {streams_[from].links[inter ? kInterOut : kIntraOut],
               streams_[to].links[inter ? kInterIn : kIntraIn]},
              bytes}};
          const sim::GroupId g = w.add_group(members, phases, flows, w.intern(label), cat_pp_, mb,
                                             true, bytes);
          out_.groups.push_back(
              GroupInfo{CommKind::kPipeline, cost::CollectiveKind::kSendRecv, bytes, 2});
          return g;
        };
        // Activations forward and gradients backward, each in the order the sender runs them
        // (the receiver consumes them in the same order on every schedule here).
        for (const auto& item : plans_by_stage_[static_cast<std::size_t>(s)].items) {
          if (item.kind != ItemKind::kForward || item.chunk != chunk) continue;
          const auto g = transfer(a, b, streams_[a].send_fwd[static_cast<std::size_t>(chunk)],
                                  streams_[b].recv_fwd[static_cast<std::size_t>(chunk_next)],
                                  "send activations", item.micro_batch);
          w.add_dependency(item_ops(a, ItemKind::kForward, chunk, item.micro_batch).last,
                           w.members(g)[0]);
          w.add_dependency(w.members(g)[1],
                           item_ops(b, ItemKind::kForward, chunk_next, item.micro_batch).first);
        }
        for (const auto& item : plans_by_stage_[static_cast<std::size_t>(s_next)].items) {
          if (item.kind != ItemKind::kBackward || item.chunk != chunk_next) continue;
          const auto g = transfer(b, a, streams_[b].send_bwd[static_cast<std::size_t>(chunk_next)],
                                  streams_[a].recv_bwd[static_cast<std::size_t>(chunk)],
                                  "send gradients", item.micro_batch);
          w.add_dependency(item_ops(b, ItemKind::kBackward, chunk_next, item.micro_batch).last,
                           w.members(g)[0]);
          w.add_dependency(w.members(g)[1],
                           item_ops(a, ItemKind::kBackward, chunk, item.micro_batch).first);
        }
      }
    }
  }
}

void Builder::emit_data_parallel(int stage) {
  auto& w = out_.workload;
  const int zero = sc_.parallel.zero_stage;
  const double grad_elem = cost::bytes_per_element(sc_.training.precision);
  const auto reduce = zero >= 1 ? cost::CollectiveKind::kReduceScatter
                                : cost::CollectiveKind::kAllReduce;
  const double stage_params = layers_ * layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) +
                              embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp, stage, pp_);
  const sim::Time step_time = stage_optimizer_time(stage);
  for (int r = 0; r < tp_sim_; ++r) {
    std::vector<std::vector<OpId>> waits(static_cast<std::size_t>(dp_sim_));
    const auto& chunks = grad_ready_[index(stage, 0, r)];
    double bucket = 0;
    int bucket_index = 0;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      bucket += chunks[c].second * grad_elem;
      const bool flush = bucket >= sc_.parallel.dp_bucket.value || c + 1 == chunks.size();
      if (!flush || replicas_ == 1) continue;
      const auto plan = costs_.collective(reduce, cost::Bytes{bucket}, layout_.dp_group(stage, r));
      std::vector<std::size_t> members;
      for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
      const auto g = emit_collective(members, &DeviceStreams::dp, plan,
                                     zero >= 1 ? "grad reduce-scatter" : "grad all-reduce",
                                     cat_dp_, bucket_index++, CommKind::kDataParallel, replicas_);
      for (int d = 0; d < dp_sim_; ++d) {
        const OpId member = w.members(g)[static_cast<std::size_t>(d)];
        w.add_dependency(grad_ready_[index(stage, d, r)][c].first, member);
        waits[static_cast<std::size_t>(d)].push_back(member);
      }
      bucket = 0;
    }
    std::vector<OpId> steps;
    for (int d = 0; d < dp_sim_; ++d) {
      const std::size_t dev = index(stage, d, r);
      const OpId op = w.add_compute(streams_[dev].compute, step_time, w.intern("adamw step"),
                                    cat_opt_);
      w.add_dependency(final_backward_[dev], op);
      for (OpId m : waits[static_cast<std::size_t>(d)]) w.add_dependency(m, op);
      steps.push_back(op);
    }
    if (zero >= 1 && zero <= 2 && replicas_ > 1) {
      // Updated bf16 weights all-gathered back to every replica (gathered size: whole stage).
      const auto plan = costs_.collective(cost::CollectiveKind::kAllGather,
                                          cost::Bytes{stage_params * grad_elem},
                                          layout_.dp_group(stage, r));
      std::vector<std::size_t> members;
      for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
      const auto g = emit_collective(members, &DeviceStreams::dp, plan, "param all-gather",
                                     cat_dp_, -1, CommKind::kDataParallel, replicas_);
      for (int d = 0; d < dp_sim_; ++d) {
        w.add_dependency(steps[static_cast<std::size_t>(d)],
                         w.members(g)[static_cast<std::size_t>(d)]);
      }
    }
  }
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
  out_.optimizer_category = cat_opt_;
  mem_weights_ = w.memory_category("weights");
  mem_grads_ = w.memory_category("gradients");
  mem_optimizer_ = w.memory_category("optimizer state");
  mem_act_ = w.memory_category("activations");
  mem_zero3_ = w.memory_category("zero-3 gathered weights");
  // The estimate is an upper bound (about 2x here); untouched capacity costs address space only,
  // and the cap keeps that bounded near the op limit.
  constexpr std::size_t kMaxReserve = 16'000'000;
  const std::size_t reserve = std::min(op_estimate_, kMaxReserve);
  w.reserve(reserve, reserve, reserve);
  add_devices();
  set_base_memory();
  for (int s = 0; s < pp_; ++s) {
    for (int d = 0; d < dp_sim_; ++d) tp_place_.push_back(layout_.tp_group(s, d));
    cp_place_.push_back(layout_.replica_block_group(s, 0, sc_.parallel.cp));
  }
  const std::size_t n = out_.devices.size();
  out_.steps = async_steps(sc_.parallel.schedule, pp_, m_);
  out_.shape = ScheduleShape{sc_.parallel.schedule, pp_, m_, chunks_, out_.steps.total};
  total_mb_ = m_ * out_.steps.total;
  for (int s = 0; s < pp_; ++s) plans_by_stage_.push_back(stage_plan(out_.shape, s));
  item_ops_.assign(n * 3 * static_cast<std::size_t>(chunks_) * static_cast<std::size_t>(total_mb_),
                   PassOps{});
  optimizer_ops_.assign(n, {});
  grad_ready_.assign(n, {});
  final_backward_.assign(n, kNone);
  for (int s = 0; s < pp_; ++s) emit_stage(s);
  emit_p2p();
  if (!async_) {
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
  const double per_stage_layers = static_cast<double>(layers_) * m_ * gpus_per_stage;
  out_.model_flops_per_step =
      cost::Flops{pp_ * per_stage_layers * layer_.model_flops.value +
                  m_ * gpus_per_stage * (embed_.model_flops.value + head_.model_flops.value)};
  const bool paci_mem = sc_.parallel.schedule == PipelineSchedule::kPaci &&
                        sc_.parallel.paci_mode == PaciMode::kMem;
  const double layer_executed = (executed(layer_.forward) + executed(layer_.backward)).value +
                                (paci_mem ? executed(layer_.forward).value : 0.0);
  out_.executed_flops_per_step = cost::Flops{
      pp_ * per_stage_layers * layer_executed +
      m_ * gpus_per_stage *
          (executed(embed_.forward) + executed(embed_.backward) + executed(head_.forward) +
           executed(head_.backward))
              .value};
  return std::move(out_);
}

}  // namespace

const char* comm_kind_name(CommKind kind) {
  switch (kind) {
    case CommKind::kTensorParallel: return "tp";
    case CommKind::kPipeline: return "pp";
    case CommKind::kDataParallel: return "dp";
    case CommKind::kContextParallel: return "cp";
  }
  return "?";
}

std::size_t estimate_op_count(const Scenario& sc, const BuildOptions& options) {
  const double replicas =
      options.full ? static_cast<double>(sc.replicas()) * sc.parallel.tp : 1.0;
  // Per layer and micro-batch: at most 8 compute blocks and 12 collectives forward, backward and
  // recompute together, plus ZeRO-3's three, plus 4 per context-parallel ring step; pipeline
  // transfers two per boundary; asynchronous schedules run several steps.
  const double per_layer = 24.0 + 4.0 * (sc.parallel.cp > 1 ? sc.parallel.cp : 0);
  const double steps = async_steps(sc.parallel.schedule, sc.parallel.pp, sc.micro_batches()).total;
  const double per_device = static_cast<double>(sc.micro_batches()) * steps *
                            (sc.layers_per_stage() * per_layer + 16.0);
  const double total = per_device * sc.parallel.pp * replicas;
  return total > 1e18 ? static_cast<std::size_t>(1e18) : static_cast<std::size_t>(total);
}

BuiltWorkload build_workload(const Scenario& scenario, const cost::CostModel& costs,
                             const BuildOptions& options, std::size_t max_ops) {
  const std::size_t estimate = estimate_op_count(scenario, options);
  if (estimate > max_ops) {
    throw std::length_error(fmt::format(
        "this scenario would need about {} simulated ops{}, over the limit of {}; {}",
        estimate, options.full ? " in --full mode" : "", max_ops,
        options.full ? "drop --full (symmetric mode simulates one replica per stage)"
                     : "reduce the micro-batch count or the layer count"));
  }
  return Builder(scenario, costs, options, estimate).build();
}

}  // namespace parasim::strat
