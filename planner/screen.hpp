#pragma once
// parasim::plan::Screen — the analytic tier: a candidate's step time, bubble, exposed
// communication and a floor of its peak memory per GPU, from the same cost model `simulate`
// uses, in microseconds per candidate (docs/planner.md, The two tiers).
//
// Where each figure comes from (no second cost model):
// - Layer, embedding and head times: the layer programs the builder emits
//   (strategies/layers/layer_program.hpp), run once per distinct layer shape (tp, sp, cp, micro-batch,
//   recompute, attention, placement, GPU count) and cached; each step list is timed as the
//   engine runs it without contention: compute blocks in order on the compute stream, each
//   collective step costed by the cost model's plan for the group (cost::estimate_time, the
//   simulator's uncontended time), steps that name earlier ones (ring attention) scheduled as
//   their small DAG on their own stream.
// - Pipeline: per micro-batch stage times f_s, b_s (w_s for zero-bubble schedules: the B/W
//   split of the layer program), the flush time sum_s(f_s + b_s) + (m - 1) max_s(f_s + b_s) for
//   gpipe and 1f1b (the closed form (m + P - 1)(f + b) for equal stages), m max_s(f_s + b_s) +
//   (sum_s - max_s)/v for interleaved (bubble (P - 1)(f + b)/v), m max_s(f + b + w) + (P - 1)
//   max(0, f + b - w) for zb-h1 and zb-1p (whose searched order has ZB-H1's bubble on equal
//   stages) and (P - 1) max(0, f + b - 2w) for zb-h2 when m >= 2P (else ZB-H1's) (Qi et al. 2024,
//   arXiv 2401.10241), zb-2p
//   m max_s(f + b + w) when m >= 2P (its bubble is zero there, docs/schedules.md) and ZB-H1's
//   form below, plus 2 (P - 1) point-to-point transfers (the cost model's send/recv). With
//   optimizer post-validation (zb-1p, zb-2p by default) each stage steps after its own last W:
//   the step is the longest stage's span, its reduction and its optimizer.
//   Asynchronous schedules: the steady state m max_s(f_s + b_s) plus their optimizer steps. Each
//   formula is its schedule's registry entry (ScheduleTraits::pipeline_time, staleness,
//   activation_sets, updates; strategies/schedules/schedule_NAME.cpp), so a schedule added there
//   brings its own.
// - Host (the scenario's framework, strategies/framework/): every list of steps also carries the
//   host time the builder gives it (step_host_costs, the same function), each pass its item's
//   host work and syncs (item_start_host / item_end_host) and the step its optimizer's
//   (optimizer_host); host and GPU are combined as the engine runs them (host_timing.hpp): per
//   pass max(GPU time, host time) plus the drains its syncs force, L layers as the L-th power of
//   one layer's map. With pp = 1 the whole sequence of passes is one product (the host's lead
//   carries from pass to pass); with pp > 1 each pass is timed from an idle device and enters
//   the schedule's closed form.
// - Data parallel, the overlap rule: buckets of dp_bucket bytes (whole layers, head first) are
//   launched as the last micro-batch's backward produces them (a framework that reduces after
//   the backward: all at its end, after its flatten passes) and run one after another on the
//   dp stream; what runs past that backward's end is exposed. ZeRO-1/2's parameter all-gather
//   and the optimizer step (AdamW's memory-bound update; Shampoo/DASH's shampoo_step_cost) are
//   exposed. ZeRO-3: each layer's all-gather (and its gradients' reduce-scatter in the
//   backward) is hidden behind the layer's compute, the excess exposed.
// - Memory: a floor of the simulated peak from the ledger's own formulas: model state
//   (cost::model_state_bytes of the stage's parameters, Shampoo state), plus the activation
//   sets the schedule must hold at once on stage 0 (gpipe m; zb-h2 2P - 1; the others P, capped
//   at m) times the layer program's stored bytes, and on the last stage one set plus the head's
//   logits. The simulation decides near the limit (a floor never rejects a layout that fits).
// Not in the screen (the simulate tier has them): contention between concurrent transfers, the
// compute slowdown while communication overlaps it, the host's lead carried between passes
// with pp > 1, the first micro-batch's missing gradient adds with pp > 1 (the screen adds them
// to every backward: a bound), PACI's mem-mode recompute.
//
// One Screen per thread: its caches are its own; every figure is a pure function of the
// candidate, so results do not depend on which thread screened what.

#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "costmodel/cost_model.hpp"
#include "planner/candidate.hpp"
#include "planner/host_timing.hpp"
#include "strategies/framework/host_plan.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/layers/checkpoint_groups.hpp"
#include "strategies/layers/layer_program.hpp"

namespace parasim::plan {

// The rank layout's view of a candidate (strategies/workload/rank_layout.hpp): cp ranks fold into
// the replica dimension, as the builder's replica_spec does (workload_builder_impl.hpp).
inline strat::ParallelSpec screen_replica_spec(const Candidate& c) {
  strat::ParallelSpec p;
  p.dp = c.dp * c.cp;
  p.tp = c.tp;
  p.pp = c.pp;
  return p;
}

struct Estimate {
  double step_s = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  double bubble_fraction = 0;   // of the pipeline time, stage with the most compute
  double exposed_comm_s = 0;    // per GPU per step
  double peak_bytes = 0;        // floor of the largest device's peak, CUDA context and NCCL
                                // buffers included (as the simulated device_bytes)
  int staleness = 0;            // closed form (rules.hpp)
  // zb-1p / zb-2p: a stage's single forward keeps more than the search's memory limit (p or 2p
  // times M_B, zero_bubble_costs.cpp), so the builder refuses the schedule (no order fits).
  bool schedule_refused = false;
};

// The cost models of the GPU counts a space uses (the cluster's nodes differ).
struct CostModels {
  std::map<int, const cost::CostModel*> by_gpus;
  const cost::CostModel& at(int gpus) const { return *by_gpus.at(gpus); }
};

// A cache key: up to twelve small integers.
// The groups a layer's collectives run over (one rank's: stage 0, replica 0, tp rank 0), by
// LayerStep::group: tensor, context and the experts' (MoE parallel folding, rank_layout.hpp).
struct ScreenGroups {
  cost::GroupPlacement tp, cp, ep, etp, grid;
  cost::GroupPlacement cp_a2a, cp_ring;  // a2a+p2p's subgroups (strat::cp_group_shape)
  const cost::GroupPlacement& of(strat::StepGroup g) const {
    switch (g) {
      case strat::StepGroup::kContextParallel:
        return cp;
      case strat::StepGroup::kContextAllToAll:
        return cp_a2a;
      case strat::StepGroup::kContextRing:
        return cp_ring;
      case strat::StepGroup::kExpertParallel:
        return ep;
      case strat::StepGroup::kExpertTensor:
        return etp;
      case strat::StepGroup::kExpertGrid:
        return grid;
      default:
        return tp;
    }
  }
};

struct ScreenKey {
  std::array<std::int64_t, 12> v{};
  bool operator==(const ScreenKey&) const = default;
};
struct ScreenKeyHash {
  std::size_t operator()(const ScreenKey& k) const {
    std::uint64_t h = 1469598103934665603ull;
    for (std::int64_t x : k.v) h = (h ^ static_cast<std::uint64_t>(x)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

class Screen {
 public:
  Screen(const strat::Scenario& base, const CostModels& costs)
      : base_(base),
        costs_(costs),
        eager_framework_(base.training.framework),
        compiled_framework_(base.training.framework) {
    eager_framework_.compile.enabled = false;  // a candidate's torch.compile (Candidate::compile)
    compiled_framework_.compile.enabled = true;
  }
  Estimate estimate(const Candidate& c);

 private:
  struct Pass {
    double forward = 0, backward = 0, backward_input = 0, weight_grad = 0;
    double forward_comm = 0, backward_comm = 0;  // blocking collective time inside them
    // Host and GPU of each list (host_timing.hpp); backward_input: the backward with a B/W split.
    HostGpu forward_map, backward_map, backward_input_map, weight_grad_map;
  };
  struct Programs {
    Pass layer, embed, head;
    Pass moe;  // an MoE layer's (models with experts)
    double moe_stored = 0, moe_full = 0, moe_flops = 0;
    HostGpu grad_accumulation;  // the framework's gradient adds after a layer's backward
    bool grad_accumulation_empty = true;
    double stored = 0, full = 0;  // activation bytes per layer
    double model_flops = 0;       // per micro-batch per TP rank: all layers excluded, one layer
    double embed_flops = 0, head_flops = 0;
    double head_stored = 0;  // the head's kept activations (logits; MTP modules)
    // Megatron's grouped full recompute (strategies/layers/checkpoint_groups.hpp): block's layers
    // without recompute, and a checkpointed layer's backward apart from its rerun (the rest
    // issued with the group's nested backward on its last layer, rest_last, or without it).
    Pass plain;
    double plain_stored = 0;
    HostGpu rerun_map, rest_map, rest_last_map;
  };
  // FP8 weights' once-a-step casts and elements (layer_program.hpp): a dense layer's, an MoE
  // layer's, the head's MTP modules'; they depend on the weights' sharding and the recipe only.
  struct Fp8Weights {
    strat::QuantizedWeightStep layer, moe, head;
  };
  const Fp8Weights& fp8_weights(const Candidate& c);
  // What a stage's data-parallel step costs, independent of the micro-batch: its gradient
  // buckets (index of the last gradient chunk in each, head first, and its reduction time),
  // the optimizer step, ZeRO-1/2's parameter all-gather, the model state it holds.
  struct StageStatic {
    std::vector<std::pair<int, double>> buckets;
    double optimizer = 0, param_gather = 0, state_bytes = 0;
    // --overlap-param-gather: the bucket all-gathers in forward order, each with the chunk
    // (head first, as `buckets`) whose forward waits for it.
    std::vector<std::pair<int, double>> param_gathers;
    double non_tensor_bytes = 0;  // CUDA context and NCCL buffers (communicators.hpp)
    double optimizer_host = 0;  // the step's host work before its syncs (optimizer_host)
    int optimizer_syncs = 0;
  };
  // One stage's F, B and W pass times per micro-batch (all its chunks), host included; pp = 1:
  // `sequence` is the whole step's pipeline (every micro-batch's passes).
  struct StagePasses {
    double f = 0, b = 0, w = 0, sequence = 0;
  };
  const Programs& programs(const Candidate& c);
  StagePasses stage_passes(const Candidate& c, const Programs& pr, int stage, int micro_batches,
                           double zero3_forward, double zero3_backward);
  double p2p_time(const Candidate& c);
  // Layers on `stage` in all: layers / pp with even stages, the candidate's edge split otherwise
  // (candidate.hpp, uneven_stage_layers), the base's own stages for the yours row
  // (own_stage_layers); a middle stage stands for every one between.
  int stage_layers(const Candidate& c, int stage);
  // MoE layers among them (ModelSpec's first dense layers and layer frequency).
  int stage_moe_layers(const Candidate& c, int stage);
  // The first layer of each virtual stage of `stage` and its count, chunk by chunk.
  std::vector<std::pair<int, int>> stage_ranges(const Candidate& c, int stage);
  // The stage split of the candidate (empty: even), computed once per split.
  const std::vector<int>& stage_split(const Candidate& c);
  const StageStatic& stage_static(const Candidate& c, int stage);
  // ZeRO-3: one layer's weight all-gather and gradient reduce-scatter.
  std::pair<double, double> zero3_times(const Candidate& c);
  // FSDP2 (strategies/data_parallel/fsdp2_units.hpp), one block per micro-batch: the
  // all-gathers before its forward and backward (with their copy-in; under pipelining the
  // forward's once a step, spread over the micro-batches), its reduction when every micro-batch
  // reduces (reduce-scatter, HSDP all-reduce), and the copy kernels on the compute stream.
  struct Fsdp2Times {
    double gather_forward = 0, gather_backward = 0, reduce = 0;
    double compute_forward = 0, compute_backward = 0;
    double reduce_at_end = 0;  // pipelining: the block's reduction after the stage's backward
  };
  const Fsdp2Times& fsdp2_times(const Candidate& c);
  Pass time_program(const strat::LayerProgram& p, const cost::CostModel& costs,
                    const ScreenGroups& groups, bool layer, bool checkpointed);
  double steps_time(const std::vector<strat::LayerStep>& steps, const cost::CostModel& costs,
                    const ScreenGroups& groups, double* comm);
  // The list's host and GPU map: its steps issued with step_host_costs(steps, context).
  HostGpu steps_map(const std::vector<strat::LayerStep>& steps, strat::HostContext context,
                    const cost::CostModel& costs, const ScreenGroups& groups);
  ScreenGroups groups_of(const Candidate& c) const;

  const strat::Scenario& base_;
  const CostModels& costs_;
  // The base's framework with torch.compile off and on, and whether the programs being timed
  // are a compiled candidate's (set by programs(); a Screen is one thread's).
  strat::FrameworkSpec eager_framework_;
  strat::FrameworkSpec compiled_framework_;
  bool compiled_ = false;
  std::unordered_map<ScreenKey, Programs, ScreenKeyHash> programs_;
  std::unordered_map<ScreenKey, Fp8Weights, ScreenKeyHash> fp8_weights_;
  std::unordered_map<ScreenKey, double, ScreenKeyHash> p2p_;
  std::unordered_map<ScreenKey, StageStatic, ScreenKeyHash> stages_;
  std::unordered_map<ScreenKey, std::pair<double, double>, ScreenKeyHash> zero3_;
  std::unordered_map<ScreenKey, Fsdp2Times, ScreenKeyHash> fsdp2_;
  std::unordered_map<ScreenKey, StagePasses, ScreenKeyHash> passes_;
  std::unordered_map<ScreenKey, std::vector<int>, ScreenKeyHash> splits_;
};

}  // namespace parasim::plan
