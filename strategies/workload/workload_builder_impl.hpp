#pragma once
// Internal to strategies/: the workload builder's state and steps, split over
// workload/workload_builder.cpp (devices, memory, layer steps and collectives, build),
// workload/pipeline_emission.cpp (pipeline items, gates, point-to-point transfers),
// workload/host_emission.cpp (the framework's host stream), workload/zero_bubble_costs.cpp (the
// zero-bubble search's input) and data_parallel/data_parallel_emission.cpp (gradient buckets,
// ZeRO, the optimizer step). Not a public header: use workload_builder.hpp.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "costmodel/model_state_memory.hpp"
#include "strategies/data_parallel/fsdp2_units.hpp"
#include "strategies/data_parallel/megatron_buckets.hpp"
#include "strategies/data_parallel/zero3_gather_units.hpp"
#include "strategies/data_parallel/zero3_resident.hpp"
#include "strategies/framework/host_plan.hpp"
#include "strategies/layers/checkpoint_groups.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/optimizers/optimizer_adamw.hpp"
#include "strategies/optimizers/optimizer_shampoo.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"
#include "strategies/schedules/zero_bubble_search.hpp"
#include "strategies/workload/communicators.hpp"
#include "strategies/workload/rank_layout.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::strat::detail {

using sim::kNone;
using sim::OpId;

enum LinkSlot { kIntraOut, kIntraIn, kInterOut, kInterIn, kLinkSlots };

struct DeviceStreams {
  sim::StreamId compute, tp, dp, cp, weights;
  sim::StreamId ep;  // the experts' collectives (dispatch, combine; the tp stream without MoE)
  // FSDP2's reduce-scatter and HSDP all-reduce streams (fsdp2_emission.cpp; its all-gathers run
  // on dp); dp without FSDP2.
  sim::StreamId fsdp_reduce, fsdp_replica;
  sim::StreamId host;  // the framework's host thread (StreamKind::kHost)
  std::vector<sim::StreamId> recv_fwd, recv_bwd, send_fwd, send_bwd;  // per model chunk
  std::array<sim::LinkId, kLinkSlots> links;
  // Optimizer offload only (offload_emission.cpp): the copy streams and the host link, each
  // direction; kNone otherwise.
  sim::StreamId d2h = sim::kNone, h2d = sim::kNone;
  sim::LinkId link_d2h = sim::kNone, link_h2d = sim::kNone;
};

// The rank layout sees dp x cp replicas (Megatron's order tp-cp-dp-pp: cp ranks are adjacent).
inline ParallelSpec replica_spec(ParallelSpec p) {
  p.dp *= p.cp;
  return p;
}

// First and last op of one pipeline item on one device, and its first host op (the host
// thread's waits for the item's receive attach there) and the next item's (for the send).
struct PassOps {
  OpId first = kNone;
  OpId last = kNone;
  OpId host_first = kNone;
  OpId host_next = kNone;
};

// The host op being written on one device (host_emission.cpp): its host time so far, the GPU
// ops it issues (IssueSpec::host filled in when it is closed) and the GPU ops it waits for (a
// sync at its start).
struct HostCursor {
  sim::Time elapsed;
  std::vector<sim::IssueSpec> pending;
  std::vector<OpId> waits;
  OpId item_first = kNone;  // first host op of the item being emitted
  sim::LabelId label = 0;
  int index = -1;
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
        layer_(transformer_layer_program(sc, costs)),
        moe_layer_(sc.model.moe.enabled() ? transformer_layer_program(sc, costs, LayerKind::kMoe)
                                          : LayerProgram{}),
        bf16_layer_(sc.has_bf16_layers() ? transformer_layer_program(without_fp8(sc), costs)
                                         : LayerProgram{}),
        bf16_moe_layer_(sc.has_bf16_layers() && sc.model.moe.enabled()
                            ? transformer_layer_program(without_fp8(sc), costs, LayerKind::kMoe)
                            : LayerProgram{}),
        plain_layer_(has_plain_layers(sc.training)
                         ? transformer_layer_program(without_recompute(sc), costs)
                         : LayerProgram{}),
        embed_(embedding_program(sc, costs)),
        head_(head_program(sc, costs)),
        noop_layer_(noop_layer_steps(sc, costs)),
        fw_(sc.training.framework),
        zero3_units_(zero3_gather_units(sc.model, sc.parallel.tp, sc.training.framework.zero3)) {}

  BuiltWorkload build();
  // FSDP2's root units, beside the blocks (numbered by layer).
  static constexpr int kFsdp2Embedding = -1, kFsdp2Head = -2;

 private:
  // Index of the simulated device of (stage, dp, tp) among the simulated ones.
  std::size_t index(int stage, int d, int r) const {
    return (static_cast<std::size_t>(stage) * dp_sim_ + d) * tp_sim_ + r;
  }
  // The program of layer `layer` (0-based over the model): an MoE layer's or the dense one, in
  // bf16 where FP8 training keeps the layer in bf16.
  const LayerProgram& program_of(int layer) const {
    const bool moe = sc_.model.moe.is_moe_layer(layer);
    if (sc_.has_bf16_layers() && !sc_.training.fp8_layer(layer, sc_.model.layers)) {
      return moe ? bf16_moe_layer_ : bf16_layer_;
    }
    return moe ? moe_layer_ : layer_;
  }
  // The FP8 weights of `stage`'s layers (and its MTP modules): per-step casts and elements.
  QuantizedWeightStep stage_fp8_weights(int stage) const;
  // FP8: the stage's weight casts as an optimizer op after `after` on `dev` (the cast of the next
  // step's first micro-batch, in a steady state); `after` itself without FP8.
  OpId emit_fp8_weight_casts(std::size_t dev, int stage, OpId after);
  // Simulated devices of the expert group `group` of (stage, d, r) (the ranks RankLayout names,
  // among those simulated: in symmetric mode the one device stands for them all), and its
  // placement.
  std::vector<std::size_t> expert_members(int stage, int d, int r, StepGroup group) const;
  cost::GroupPlacement expert_placement(int stage, int d, int r, StepGroup group) const;
  void add_devices();
  void set_base_memory();
  struct ActivationBytes;
  ActivationBytes activation_bytes(const LayerProgram& layer) const;
  PassOps& item_ops(std::size_t dev, ItemKind kind, int chunk, int mb);
  void emit_stage(int stage);
  // Flush schedules simulating several iterations (post-validation): at the optimizer item O
  // closing an iteration on `stage`, that iteration's data-parallel reduction and optimizer step
  // (emit_data_parallel); gate[k] gets the ops the next iteration's first item waits for.
  void end_iteration(int stage, int step, std::vector<std::vector<OpId>>& gate);
  // Searched zero-bubble schedules (zb-1p, zb-2p): the search's input from this workload's own
  // costs (zero_bubble_costs.cpp), and the search run on it.
  ZeroBubbleInput zero_bubble_input() const;
  ZeroBubbleOrder searched_order() const;
  void emit_item(int stage, const PipelineItem& item, bool final_pass, std::vector<OpId>& chain);
  sim::Time stage_optimizer_time(int stage) const;
  // Optimizer offload (offload_emission.cpp; costmodel/offload_cost.hpp): the copy streams and
  // host links of a device; the parameters whose optimizer state a rank of `stage` owns; the
  // gradient copies of a micro-batch's backward before the step's last (DeepSpeed's
  // accumulation through the host); the offloaded step of one device after `waits`, returning
  // its last op (what the parameter all-gather waits for besides the GPU step).
  void add_offload_streams(sim::DeviceId dev, DeviceStreams& st, const std::string& prefix);
  double optimizer_shard(int stage) const;
  void emit_offload_accumulation(std::size_t dev, int stage, int mb, OpId after);
  OpId emit_offloaded_step(std::size_t dev, int stage, const std::vector<OpId>& waits,
                           OpId gpu_step);
  OpId host_copy(std::size_t dev, bool to_host, double bytes, const char* label, int index);
  // The same copy issued on `stream` (FSDP2's copy-in and post-reduce streams, ZeRO-3's gather
  // stream), in `category`; its flow on the device's host link.
  OpId host_copy_on(std::size_t dev, sim::StreamId stream, bool to_host, double bytes,
                    const std::string& label, sim::LabelId category, int index);
  // ZeRO-Infinity's offload_param: each simulated rank's copy of its partition of a unit of
  // `elements` (tp rank r) to the GPU before the gather, on the gather's stream; empty without.
  std::vector<OpId> emit_partition_h2d(int stage, int r, int mb, const std::string& where,
                                       double elements, const std::vector<OpId>& prefetch_after);
  // Emits `steps` on every simulated (dp, tp) rank of `stage`, each chained after chain[k]
  // (k = d * tp_sim + r); sets first[k] to the first op emitted when it is still unset.
  // Each GPU op is issued by the device's host cursor with `host[i]` (host_plan.hpp); a step's
  // syncs (LayerStep::syncs_after) split the host op there.
  void emit_steps(int stage, const std::vector<LayerStep>& steps, const std::string& where,
                  sim::LabelId category, int mb, std::vector<OpId>& chain, std::vector<OpId>& first,
                  const std::vector<StepHost>& host);
  // Host issue (host_emission.cpp). The host costs of `steps` in `context`, computed once.
  const std::vector<StepHost>& host_plan(const std::vector<LayerStep>& steps, HostContext context);
  void host_work(std::size_t dev, sim::Time t) { host_[dev].elapsed += t; }
  // `gpu` issued by the open host op: its first kernel after h.first, its last after h.total
  // (a group member: called at the end, no body).
  void host_issue(std::size_t dev, OpId gpu, StepHost h, sim::Time last_body, bool member);
  // `count` syncs: the host waits for `gpu` (and so for what its stream ran before), then pays
  // each sync's cost; with dynamic schedules only the cost (host_syncs_wait_).
  void host_sync(std::size_t dev, OpId gpu, int count);
  // Closes the open host op (none if it has no time and issues nothing); returns it or kNone.
  OpId host_close(std::size_t dev);
  void host_begin(std::size_t dev, const char* label, int index);
  // The host side of a pipeline item before its first GPU op and after its last.
  void host_item_start(std::size_t dev, const PipelineItem& item, OpId previous_gpu);
  void host_item_end(std::size_t dev, const PipelineItem& item, OpId last_gpu);
  // The optimizer's host work on one device: its per-step cost and launches, then its syncs,
  // which wait for every op in `waits`, then the optimizer's GPU ops issued in order. The host
  // op is left open (the caller closes it).
  void host_optimizer(std::size_t dev, int stage, const std::vector<OpId>& waits,
                      const std::vector<OpId>& optimizer_ops);
  // Parameters one rank of `stage` holds: its layers' dense part with the embedding and head, and
  // its local experts (layer_params_on_rank).
  LayerParams stage_params(int stage) const;
  // The head's gradients (and the MTP modules': their dense part with the head's, their experts
  // over the expert data-parallel group) ready at `op` on device `dev`.
  void head_gradients_ready(std::size_t dev, OpId op);
  // Parameter tensors `stage` holds (layer_parameter_tensors, embedding_parameter_tensors).
  int stage_parameter_tensors(int stage) const;
  // ZeRO-3: bytes of one layer's weights a rank gathers from the others (what it holds while the
  // layer runs beyond its own shard).
  // Bytes per gathered element (the training precision; FP8 weight matrices under torchao's
  // float8 all-gather).
  double zero3_element_bytes() const;
  double zero3_gathered_bytes() const;
  // ZeRO-3 with per-module gathering: bytes a rank holds gathered beyond its own shard during
  // the forward (`backward` false) or the backward of the `l`-th of a virtual stage's `layers`
  // layers, or with `after` what that pass leaves gathered, as DeepSpeed's coordinator keeps
  // them (zero3_resident.hpp); per-layer gathering returns -1 (the gathers' own allocations are
  // the resident memory).
  double zero3_resident_bytes(int layers, int l, bool backward, bool after = false);
  // ZeRO-3: the weights a layer pass holds gathered on simulated device `dev`, from its first
  // op's start to its end, and what it leaves gathered until that device's next layer pass.
  void zero3_hold(std::size_t dev, int layers, int l, bool backward, OpId first, OpId last);
  // ZeRO-3: all-gather one layer's weights over the data-parallel group before it runs; the
  // gather may start once prefetch_after[k] has finished (one layer ahead, or, without
  // prefetch, the previous layer's last op); last_compute[k] is the device's last compute op
  // (what a blocking fetch's synchronize waits for); `hold` false for a re-gather the ledger
  // already holds.
  void zero3_gather(int stage, int mb, const std::string& where,
                    const std::vector<OpId>& prefetch_after, const std::vector<OpId>& last_compute,
                    bool hold = true);
  void zero3_reduce(int stage, int mb, const std::string& where, const std::vector<OpId>& chain);
  // Blocking ZeRO-3: the end of a backward pass's flush, the host waiting for its last
  // reduce-scatter (DeepSpeed 2021's torch.cuda.synchronize() after the backward).
  void zero3_end_backward(int stage);
  // FSDP2 (fsdp2_emission.cpp, fsdp2_units.hpp). Units: a layer index, kFsdp2Embedding or
  // kFsdp2Head. Before a unit's forward or backward: its all-gather (over the ranks it is
  // sharded over now; none when it is whole) may start once prefetch_after[k] has started, its
  // copy-out runs on the compute chain. After its forward: resharded as the policy says. After
  // its backward: its gradients reduced (every micro-batch) or accumulated (pipelining), and the
  // unit resharded; fsdp2_finish reduces what pipelining accumulated after the chunk's last
  // backward.
  double fsdp2_unit_elements(int unit) const;
  void fsdp2_unshard(int stage, int mb, const std::string& where, int unit,
                     const std::vector<OpId>& prefetch_after, std::vector<OpId>& chain);
  void fsdp2_after_forward(int stage, int unit, const std::vector<OpId>& chain);
  // Before the unit's backward: its gradients' memory from `first` on.
  void fsdp2_before_backward(int stage, int unit, const std::vector<OpId>& first);
  void fsdp2_after_backward(int stage, int mb, const std::string& where, int unit,
                            std::vector<OpId>& chain);
  void fsdp2_finish(int stage, const std::vector<int>& units, std::vector<OpId>& chain);
  // The reduce-scatter (and HSDP all-reduce) of one unit's gradients after chain[k], its
  // reduce-scatter input of `input_bytes` per rank allocated from the copy-in.
  void fsdp2_reduce(int stage, int mb, const std::string& where, int unit, double copy_in_bytes,
                    std::vector<OpId>& chain);
  sim::GroupId emit_collective(const std::vector<std::size_t>& members,
                               sim::StreamId DeviceStreams::*stream,
                               const cost::CollectivePlan& plan, const std::string& label,
                               sim::LabelId category, int mb, CommKind kind, int group_size);
  sim::GroupId emit_collective(const std::vector<std::size_t>& members,
                               sim::StreamId DeviceStreams::*stream,
                               const cost::CollectivePlan& plan, sim::LabelId label,
                               sim::LabelId category, int mb, CommKind kind, int group_size,
                               std::uint8_t queue = 0);
  void emit_p2p();
  // The second link of a point-to-point flow from device `from` to `to` in a phase: on a fully
  // connected mesh (the phase carries a rate cap) the one link between the pair, shared by every
  // transfer between them (TSP's weight and gradient rings go to the same neighbour); otherwise
  // the receiver's ingress port. Simplification: a mesh transfer does not load the receiver's
  // port, and collectives do not load pair links, so a node-wide collective and a ring step into
  // one GPU may together exceed its port by up to one peer link. Only analytical plans carry a
  // cap (link_efficiency 1), so the pair link's capacity is the cap itself.
  sim::LinkId p2p_second_link(std::size_t from, std::size_t to, const cost::CollectivePhase& phase);
  // The flow device `from` sends to `to` in one phase of a plan (collective_cost.hpp's contract):
  // the sender's port and the receiver's port or, for a mesh send/recv, the pair's link; a
  // calibrated phase pushes bytes / link_efficiency; a mesh collective is capped at its peers.
  sim::FlowSpec phase_flow(std::size_t from, std::size_t to, const cost::CollectivePhase& phase,
                           bool point_to_point);
  void emit_data_parallel(int stage);
  // Asynchronous schedules with several replicas (async_reduction.cpp): the stage's gradients
  // all-reduced with its replicas after the backward before stage-local optimizer step `step`;
  // per simulated rank k = d x tp + r, what the step waits for (empty lists with one replica).
  std::vector<std::vector<OpId>> emit_async_gradient_reduction(int stage, int step);
  // ZeRO-1: the updated weights all-gathered after the shards' steps `steps[k]`; per rank k the
  // gather (kNone without sharding or replicas).
  std::vector<OpId> emit_async_param_gather(int stage, int step, const std::vector<OpId>& steps);
  // Mixture of experts (data_parallel_emission.cpp): the local experts' gradient buckets over the
  // expert data-parallel group (their ops join `waits`, per [tp rank][dp rank]), and the ZeRO 1-2
  // gather of the updated experts after the optimizer `steps` (per dp rank, of tp rank r).
  void emit_expert_buckets(int stage, std::vector<std::vector<std::vector<OpId>>>& waits);
  OpId reduce_pass_kernels(std::size_t dev, sim::LabelId label, int passes, int kernels,
                           double bytes, int index);
  // Records a chunk's gradients of the step's last backward (grad_ready_), and with Megatron's
  // layout scales each bucket it completes on the compute stream there.
  void gradients_ready_at(std::size_t dev, OpId op, double elements);
  // parallel.dp_bucket_layout "megatron": the stage's buckets, checked against its chunks.
  std::vector<GradBucket> megatron_chunk_buckets(
      int stage, const std::vector<std::pair<OpId, double>>& chunks) const;
  // parallel.overlap_param_gather: the step's bucket all-gathers before its first forward.
  std::vector<std::vector<OpId>> emit_param_gathers(int stage, int mb);
  // ZeRO 1-2: the updated local experts all-gathered over the expert data-parallel group after
  // the optimizer `steps` ([tp rank][dp rank]); per simulated rank k = d x tp + r its member
  // (kNone: none). `label_index`: -1 for the step's, a stage-local step's number (async).
  std::vector<OpId> emit_expert_param_gather(int stage, const std::vector<std::vector<OpId>>& steps,
                                             int label_index = -1);
  std::vector<std::size_t> expert_data_members(int stage, int d, int r) const;
  cost::GroupPlacement expert_data_placement(int stage, int d, int r) const;
  void emit_shampoo(int stage, int tp_rank, const std::vector<std::vector<OpId>>& waits);
  // shampoo_step_cost(stage), computed once per stage (it walks every block of the stage).
  const ShampooStepCost& shampoo_cost(int stage);
  // `bytes` of `category` allocated when `op` starts, or freed when it ends; `tag` names the
  // tensor for the allocator replay (act_tag), 0: none.
  void alloc(OpId op, std::uint8_t category, double bytes, bool at_start, std::uint64_t tag = 0);
  // The activation pieces a micro-batch's items allocate and free, named so that a free meets its
  // own allocation (sim::MemoryPiece::tag). `layer` -1: the stage's head or input.
  enum class ActPiece : std::uint8_t {
    kStored,
    kTransient,
    kFull,
    kRerun,
    kKept,
    kLogits,
    kLoss,
    kStageInput
  };
  static std::uint64_t act_tag(int mb, int layer, ActPiece piece) {
    return 1 + ((static_cast<std::uint64_t>(mb) << 24) |
                (static_cast<std::uint64_t>(layer + 1) << 4) | static_cast<std::uint64_t>(piece));
  }

  std::size_t op_estimate_;
  const Scenario& sc_;
  const cost::CostModel& costs_;
  RankLayout layout_;
  int replicas_;  // dp x cp: GPUs of a stage holding the same weights
  int dp_sim_, tp_sim_, pp_, m_, chunks_;
  bool async_, split_;
  bool iterations_ = false;  // a flush schedule over several iterations (post-validation)
  int total_mb_ = 0;         // micro-batches over all simulated steps
  std::uint8_t queue_ = 0;   // queue of the item being emitted
  std::vector<StagePlan> plans_by_stage_;
  std::vector<PassOps> item_ops_;                      // see item_ops()
  std::vector<std::vector<OpId>> optimizer_ops_;       // per device, stage-local steps in order
  std::vector<std::vector<OpId>> optimizer_host_ops_;  // and the host op that issues each
  std::vector<std::vector<OpId>> optimizer_gathers_;   // and ZeRO-1's all-gather after each
  std::vector<std::optional<ShampooStepCost>> shampoo_costs_;  // per stage, see shampoo_cost()
  LayerProgram layer_, moe_layer_;
  LayerProgram bf16_layer_, bf16_moe_layer_;  // with FP8, the layers kept in bf16
  // Grouped full recompute (checkpoint_groups.hpp): block's layers without recompute, and each
  // checkpointed program's backward split into its rerun and the rest (addresses stable).
  LayerProgram plain_layer_;
  std::map<const LayerProgram*, RerunSplit> rerun_splits_;
  const RerunSplit& rerun_split(const LayerProgram& p) {
    auto it = rerun_splits_.find(&p);
    if (it == rerun_splits_.end()) it = rerun_splits_.emplace(&p, split_rerun(p.backward)).first;
    return it->second;
  }
  LayerProgram embed_, head_;
  std::vector<LayerStep> noop_layer_;  // a virtual stage without layers runs it (forward)
  BuiltWorkload out_;
  std::vector<DeviceStreams> streams_;
  // [device][k]: last op of the backward of parameter chunk k (head, layers L-1..0, embedding)
  // for the micro-batch whose backward runs last.
  std::vector<std::vector<std::pair<OpId, double>>> grad_ready_;
  std::map<int, std::vector<GradBucket>> megatron_buckets_;  // by stage (Megatron's layout)
  std::vector<std::vector<OpId>> bucket_scaled_;  // per device: each bucket's scaling kernel
  // The same for the local experts' gradients (reduced over the expert data-parallel group).
  std::vector<std::vector<std::pair<OpId, double>>> expert_grad_ready_;
  std::vector<OpId> final_backward_;                // per device: last backward op of the step
  std::vector<std::vector<OpId>> offload_pending_;  // per device: copies the offloaded step awaits
  std::vector<OpId> offload_cpu_step_;  // per device: the host op of the last CPU step (FSDP2)
  // Per device: each gradient bucket's reduction and its bytes (DeepSpeed's offload copies a
  // bucket's partition to the host once it is reduced).
  std::vector<std::vector<std::pair<OpId, double>>> offload_buckets_;
  std::vector<OpId> pending_;  // per (d, r) of the stage being emitted: extra dependency
  // Caches: the same (where, steps) and (step, placement) repeat for every micro-batch.
  std::map<std::pair<const std::vector<LayerStep>*, std::string>, std::vector<sim::LabelId>>
      step_labels_;
  std::map<std::tuple<const LayerStep*, int, int, int>, cost::CollectivePlan> plans_;
  std::vector<sim::StreamId> scratch_streams_;
  std::vector<sim::PhaseSpec> scratch_phases_;
  std::vector<sim::FlowSpec> scratch_flows_;
  std::map<std::pair<std::size_t, std::size_t>, sim::LinkId> pair_links_;  // see p2p_second_link
  std::vector<std::size_t> scratch_members_;
  std::vector<cost::GroupPlacement> tp_place_;  // per (stage, dp rank)
  // Per stage, three each (cp_place_slot): the cp group of replica 0, a2a+p2p's all-to-all
  // group and its ring.
  std::vector<cost::GroupPlacement> cp_place_;
  static std::size_t cp_place_slot(StepGroup g) {
    return g == StepGroup::kContextAllToAll ? 1 : g == StepGroup::kContextRing ? 2 : 0;
  }
  std::vector<OpId> scratch_step_ops_;
  const FrameworkSpec& fw_;
  const std::vector<double> zero3_units_;        // elements per ZeRO-3 all-gather of a layer pass
  std::map<int, Zero3Resident> zero3_resident_;  // per virtual stage's layer count
  std::vector<double> zero3_carry_;  // per simulated device: bytes left gathered by its last pass
  // Blocking ZeRO-3 (DeepSpeed 2021): per simulated device, its last reduce-scatter and the
  // elements of the gradient bucket being filled (zero3_reduce).
  std::vector<OpId> zero3_last_reduce_;
  std::vector<OpId> zero3_flushed_reduce_;  // the last call of the bucket before the filling one
  std::vector<double> zero3_bucket_fill_;
  // FSDP2: per simulated device, the ranks each unit is sharded over now (absent: the shard
  // group), whether its gradients are being accumulated (pipelining), and the reductions the
  // optimizer step waits for.
  std::vector<std::map<int, int>> fsdp2_held_;
  std::vector<std::map<int, bool>> fsdp2_accumulating_;
  std::vector<std::vector<OpId>> fsdp2_reduced_;
  std::uint8_t mem_fsdp2_params_ = 0, mem_fsdp2_grads_ = 0;
  std::vector<HostCursor> host_;  // per simulated device
  bool host_syncs_wait_ = true;   // false for dynamic schedules (see host_sync)
  std::map<std::pair<const std::vector<LayerStep>*, int>, std::vector<StepHost>> host_plans_;
  sim::LabelId cat_host_ = 0;
  sim::LabelId cat_fwd_ = 0, cat_bwd_ = 0, cat_tp_ = 0, cat_pp_ = 0, cat_dp_ = 0, cat_opt_ = 0,
               cat_cp_ = 0, cat_ep_ = 0;
  std::uint8_t mem_weights_ = 0, mem_grads_ = 0, mem_optimizer_ = 0, mem_act_ = 0, mem_zero3_ = 0;
  std::uint8_t mem_fp8_ = 0;  // FP8 weight copies; 0 (none) unless a recipe caches them
};

// Memory an item allocates and frees, per simulated rank (bytes).
struct Builder::ActivationBytes {
  double stored = 0;       // kept from a layer's forward to its backward
  double transient = 0;    // re-materialised inside a layer's backward (recompute)
  double full = 0;         // every activation of a layer (recompute none)
  double logits = 0;       // head logits and loss inputs, to the head's backward
  double loss_fp32 = 0;    // the fp32 part of `logits` (loss inputs), no longer needed after B
  double stage_input = 0;  // PACI mem mode: the only thing a forward keeps
};

}  // namespace parasim::strat::detail
