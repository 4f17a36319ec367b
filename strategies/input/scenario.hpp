#pragma once
// parasim::strat::Scenario — one what-if question: a model, a cluster, a training setup, a
// parallelization and an optimizer. Parsed and validated by scenario_parser.hpp; every field
// here is already checked (the invariants below hold for any Scenario the parser returns).
//
// Invariants: dp*tp*pp*cp == cluster.total_gpus(); tp divides heads and kv_heads; every virtual
// stage holds at least one layer and they add up to the layers (pp*chunks divides the layers
// unless parallel.stage_layers gives the counts); global_batch is a multiple of micro_batch*dp;
// zero_stage in 0..3; interleaved-1f1b has micro-batches in groups it can run (a multiple of pp,
// or microbatch_group: interleaved_group_problem); asynchronous schedules
// (pipedream, pipedream-2bw, paci) run with zero_stage 0 or 1 (any dp); zero_stage 3 only with
// gpipe and 1f1b.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/activation_checkpointing.hpp"
#include "costmodel/activation_memory.hpp"
#include "costmodel/hardware.hpp"
#include "costmodel/offload_cost.hpp"
#include "costmodel/precision/quantization.hpp"
#include "costmodel/units.hpp"
#include "strategies/framework/framework_presets.hpp"
#include "strategies/input/model.hpp"

namespace parasim::strat {

enum class PipelineSchedule {
  kGpipe,
  kOneFOneB,
  kInterleaved,
  kZbH1,
  kZbH2,
  kPipeDream,
  kPipeDream2BW,
  kPaci,
  kZb1p,
  kZb2p,
  kInterleavedZb,
  kZbV,
  kDualPipeV,
};
// "gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2", "pipedream", "pipedream-2bw", "paci",
// "zb-1p", "zb-2p", "interleaved-zb", "zb-v", "dualpipev".
const char* schedule_name(PipelineSchedule s);
// The schedule named `name`, or false.
bool schedule_from_name(std::string_view name, PipelineSchedule* out);
constexpr PipelineSchedule kAllSchedules[] = {
    PipelineSchedule::kGpipe,         PipelineSchedule::kOneFOneB,
    PipelineSchedule::kInterleaved,   PipelineSchedule::kZbH1,
    PipelineSchedule::kZbH2,          PipelineSchedule::kPipeDream,
    PipelineSchedule::kPipeDream2BW,  PipelineSchedule::kPaci,
    PipelineSchedule::kZb1p,          PipelineSchedule::kZb2p,
    PipelineSchedule::kInterleavedZb, PipelineSchedule::kZbV,
    PipelineSchedule::kDualPipeV};
// The V-shaped schedules (zb-v, dualpipev) place exactly two model chunks per stage in a V: the
// first chunk runs down the stages, the second back up, so stage s holds virtual stages s and
// 2P - 1 - s and the loss is on stage 0 (Qi et al. 2024, arXiv 2401.10241 v2 sec. 6; DeepSeek's
// DualPipeV; PyTorch's "v" stage-to-rank mapping). The others place chunk c of stage s at
// virtual stage c x P + s ("loop").
constexpr bool places_chunks_in_v(PipelineSchedule s) {
  return s == PipelineSchedule::kZbV || s == PipelineSchedule::kDualPipeV;
}
inline constexpr int kVShapeChunks = 2;
// The virtual stage `chunk` of `stage` runs, the stage running virtual stage `vs`, and the stage
// holding the output head and the loss (pp - 1, or 0 under a V).
constexpr int virtual_stage_of(PipelineSchedule s, int pp, int stage, int chunk) {
  return places_chunks_in_v(s) && chunk == 1 ? 2 * pp - 1 - stage : chunk * pp + stage;
}
constexpr int stage_of_virtual_stage(PipelineSchedule s, int pp, int vs) {
  return places_chunks_in_v(s) && vs >= pp ? 2 * pp - 1 - vs : vs % pp;
}
constexpr int head_stage_of(PipelineSchedule s, int pp) {
  return places_chunks_in_v(s) ? 0 : pp - 1;
}
// Whether the hop between virtual stages `vs` and `vs + 1` goes from one GPU to another (the
// V's turn from P - 1 to P does not: no transfer, no send or receive).
constexpr bool hop_crosses_gpus(PipelineSchedule s, int pp, int vs) {
  return stage_of_virtual_stage(s, pp, vs) != stage_of_virtual_stage(s, pp, vs + 1);
}

// Tensor-parallel placement of the layer's linears (BOOST, arXiv 2512.12131): Megatron on dense
// models; on low-rank models either vanilla (each pair column-split on r, up-projection
// row-split: all-reduces of [b,s,d] after Q, K, V, O, [b,s,d_ff] after gate and up, [b,s,d] after
// down) or BTP, bottleneck-aware (chunks shifted so that every all-reduce carries r-wide
// activations: [b,s,3r] QKV, [b,s,r] O, [b,s,2r] gate+up, [b,s,r] down).
// kTsp: TSP (arXiv 2604.26294), tp = D ranks each holding 1/D of the weights and of the sequence.
enum class TpPlacement { kMegatron, kVanilla, kBtp, kTsp };
const char* tp_placement_name(TpPlacement p);

// PACI's two memory modes: perf keeps every activation; mem keeps only each stage's input and
// recomputes the stage's forward inside its backward.
enum class PaciMode { kPerf, kMem };
// Gradient buckets: whole layers (every framework's default here) or megatron-core's DDP layout.
enum class DpBucketLayout { kLayers, kMegatron };
// How context-parallel ranks exchange what attention needs (docs/context-parallel.md): K/V blocks
// around a ring (Megatron's p2p), K/V all-gathered (all_gather), Q/K/V and the output all-to-all
// over heads (a2a, DeepSpeed-Ulysses), or all-to-all inside groups of cp_a2a_size and a ring
// across them (a2a+p2p, Megatron's hierarchical context parallelism).
enum class CpComm { kRing, kAllGather, kAllToAll, kAllToAllP2p };
// Overlap of the sequence-parallel all-gathers and reduce-scatters with the GEMMs next to them
// (docs/tp-overlap.md; strategies/layers/tp_overlap.hpp): none, torch's AsyncTP (torchtitan's
// enable_async_tensor_parallel) or Transformer Engine's userbuffers (Megatron's --tp-comm-overlap).
enum class TpCommOverlap : std::uint8_t { kNone, kAsyncTp, kUserbuffers };

// How the attention core runs: unfused (Megatron's core attention: scores and probabilities in
// HBM, stored for the backward; Korthikanti et al.'s accounting) or FlashAttention (fused, causal,
// nothing s^2 stored).
enum class AttentionKind { kUnfused, kFlash };

// FP8 training (training.precision "fp8"): the linear layers' GEMMs in FP8 with a scaling
// recipe (costmodel/precision/quantization.hpp); activations, attention, the router, the
// embedding and the output head stay in `precision` (bf16). docs/fp8.md.
enum class Fp8Format { kHybrid, kE4m3 };  // hybrid: E4M3 forward, E5M2 gradients
const char* fp8_format_name(Fp8Format f);
struct Fp8Spec {
  cost::QuantRecipe recipe = cost::QuantRecipe::kNone;  // kNone: no FP8
  Fp8Format format = Fp8Format::kHybrid;
  // The distributed optimizer's parameter all-gather in FP8, parameters kept in FP8 (Megatron's
  // --fp8-param-gather): 1 byte per linear weight in memory and on the wire.
  bool param_gather = false;
  // Transformer layers kept in bf16 at each end (Megatron's --first-last-layers-bf16 with
  // --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16; global layer indices).
  int bf16_layers_at_start = 0;
  int bf16_layers_at_end = 0;
  bool enabled() const { return recipe != cost::QuantRecipe::kNone; }
};

struct TrainingSpec {
  int global_batch = 0;  // sequences per optimizer step, all replicas together
  int micro_batch = 1;   // sequences per micro-batch
  cost::Dtype precision = cost::Dtype::kBf16;  // compute and activation dtype (bf16 with FP8)
  Fp8Spec fp8;                                 // FP8 linear GEMMs; off by default
  // "bf16", "fp16", "fp32", or "fp8:RECIPE": the registry's precision entry name.
  std::string precision_name() const;
  // Whether layer `layer` (0-based over the model, of `layers`) runs its linears in FP8.
  bool fp8_layer(int layer, int layers) const {
    return fp8.enabled() && layer >= fp8.bf16_layers_at_start &&
           layer < layers - fp8.bf16_layers_at_end;
  }
  cost::Recompute recompute = cost::Recompute::kNone;
  // Megatron's --recompute-modules under "selective" (costmodel/activation_checkpointing.hpp).
  cost::RecomputeModules recompute_modules;
  // Megatron's --recompute-method and --recompute-num-layers under "full"
  // (strategies/layers/checkpoint_groups.hpp); uniform 1 is every layer on its own.
  cost::RecomputeMethod recompute_method = cost::RecomputeMethod::kUniform;
  int recompute_num_layers = 1;
  AttentionKind attention = AttentionKind::kUnfused;
  // Gradients accumulated and reduced in fp32 under bf16/fp16 training (Megatron-LM's main_grad,
  // its default with --bf16): 4 bytes per gradient in memory and in the data-parallel reduction.
  bool fp32_gradients = false;
  double gradient_bytes() const {
    return fp32_gradients ? 4.0 : cost::bytes_per_element(precision);
  }
  // The framework that issues the step's kernels (strategies/framework/, docs/frameworks.md);
  // Megatron-LM unless the scenario names another.
  FrameworkSpec framework = default_framework();
  // training.allocator: the caching allocator's mode; unset: the framework's (FrameworkSpec::
  // allocator). allocator_kind() is the one to read.
  std::optional<AllocatorKind> allocator;
  AllocatorKind allocator_kind() const { return allocator ? *allocator : framework.allocator; }
};

// How tokens travel to their experts and back (Megatron-core's --moe-token-dispatcher-type):
// all-to-all over the expert-parallel group of each token's k copies, or an all-gather of every
// token over the expert-tensor x expert-parallel group with a reduce-scatter back, or DeepEP's
// fused kernels over that group (flex: each token once per target rank, once per remote node
// over the NIC; costmodel/token_exchange.hpp).
enum class MoeDispatcher { kAllToAll, kAllGather, kFlex };
const char* moe_dispatcher_name(MoeDispatcher d);
// The cp_variant registry entry's name: "ring", "allgather", "a2a", "a2a+p2p".
const char* cp_comm_name(CpComm c);
// The tp_comm_overlap registry entry's name: "none", "async-tp", "userbuffers".
const char* tp_comm_overlap_name(TpCommOverlap o);

// FSDP2, PyTorch's fully_shard (torch.distributed.fsdp, torch 2.15) as torchtitan applies it
// (torchtitan/distributed/fsdp.py, apply_fsdp_to_decoder, torchtitan 0.3.0): one unit per
// transformer block, one for the token embedding and one for the final norm with the output
// head; parameters sharded per tensor (DTensor Shard(0)) over the shard group, all-gathered in
// the training precision before a unit runs, gradients reduce-scattered in the gradient dtype
// (training.grad_precision: MixedPrecisionPolicy.reduce_dtype, torchtitan's
// mixed_precision_reduce).
// docs/pytorch-native.md. Chosen by parallel.sharding "fsdp2" (Fsdp2Spec::enabled).
struct Fsdp2Spec {
  bool enabled = false;
  // reshard_after_forward: after a unit's forward its parameters are freed to the shard
  // (kShardGroup, fully_shard's True), kept whole until the backward (1, False), or kept as a
  // 1/N shard so that the backward gathers over N ranks only (an integer N, fully_shard's int).
  // Unset: torchtitan's "default" policy, True without pipelining and False with it
  // (get_fsdp_reshard_after_forward_policy).
  static constexpr int kShardGroup = 0;
  std::optional<int> reshard_after_forward;
  // HSDP: data-parallel ranks split as replicate x shard (torchtitan's
  // data_parallel_replicate_degree); gradients reduce-scattered over the shard group, then
  // all-reduced over the replicas. 1: plain FSDP.
  int replicate = 1;
};

struct ParallelSpec {
  int dp = 1;
  int tp = 1;
  int pp = 1;
  bool sequence_parallel = false;
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int chunks = 1;  // v: model chunks per stage (interleaved-1f1b, interleaved-zb;
                   // 2 for zb-v and dualpipev)
  // interleaved-1f1b: micro-batches each chunk runs in a row before the next chunk (Megatron-core's
  // microbatch_group_size_per_vp_stage, Llama 3's tunable N); 0: pp, Megatron's default.
  int microbatch_group = 0;
  int microbatch_group_or_pp() const { return microbatch_group > 0 ? microbatch_group : pp; }
  // Transformer layers of each virtual stage, in the order the layers run (virtual stage
  // vs = chunk x pp + stage, or the V: Scenario::virtual_stage): pp x chunks entries, each >= 1,
  // summing to the layers. Empty: every virtual stage holds layers / (pp x chunks). The parser also
  // fills it from first_stage_layers / last_stage_layers (Megatron-LM's
  // --decoder-first/last-pipeline-num-layers).
  std::vector<int> stage_layers;
  // Zero-bubble schedules: the optimizer step runs right after each stage's own last pass and the
  // global checks (gradient norm, NaN/inf) are validated afterwards (Qi et al. 2024, arXiv
  // 2401.10241, sec. 4), so iterations overlap; simulated as a steady state of several
  // iterations. Off: a synchronisation before the step separates iterations (one simulated).
  // Unset: on for zb-1p and zb-2p (the paper's automatic schedules run with it), off otherwise
  // (post_validation() in pipeline_schedule.hpp resolves it).
  std::optional<bool> optimizer_post_validation;
  // dualpipev: each forward-backward pair of its steady phase overlapped, one micro-batch's
  // collectives (the experts' all-to-all, TP's) hidden under the other's compute (DeepSeek's
  // overlapped_forward_backward); false: run in sequence (PyTorch's OVERLAP_F_B without a
  // custom function). Unset: the framework's (FrameworkSpec::overlaps_forward_backward).
  std::optional<bool> overlap_forward_backward;
  // Context parallelism (Liu et al. 2023, ring attention, arXiv 2310.01889; Megatron's CP): the
  // sequence is split over cp ranks that hold the same weights; attention passes K/V blocks
  // around a ring while computing (ring) or all-gathers them first (allgather); or all-to-all
  // over heads (a2a; a2a+p2p: all-to-all inside groups of cp_a2a_size consecutive cp ranks, a
  // ring across the cp / cp_a2a_size groups: Megatron's --hierarchical-context-parallel-sizes
  // [cp_a2a_size, cp / cp_a2a_size]).
  int cp = 1;
  CpComm cp_comm = CpComm::kRing;
  int cp_a2a_size = 0;  // a2a+p2p only; 0: not given
  // The TP collectives around the GEMMs chunked and overlapped with them (needs sequence
  // parallelism and tp > 1; strategies/layers/tp_overlap.hpp).
  TpCommOverlap tp_comm_overlap = TpCommOverlap::kNone;
  PaciMode paci_mode = PaciMode::kPerf;
  TpPlacement tp_placement = TpPlacement::kMegatron;
  // TSP's head bucketing (arXiv 2604.26294): each attention round gathers the K/V of its head
  // shard in this many buckets (kv_heads / tp / buckets heads each), attending one while the
  // next arrives; the gathered K/V held at once shrinks by this factor. 1: one bucket per round.
  int tsp_kv_buckets = 1;
  // BOOST's system optimizations (meaningful with low-rank placements):
  bool online_rmsnorm = true;          // the norm statistic rides in the next all-reduce (BTP)
  bool linear_grouping = true;         // linears sharing an input: one GEMM and one collective
  bool lowrank_checkpointing = false;  // keep only the r-wide chunk boundaries (BTP)
  int zero_stage = 0;
  // FSDP2 instead of ZeRO (zero_stage is 3 with it: weights, gradients and optimizer state
  // sharded); the shard group is dp / fsdp2.replicate x cp ranks (torchtitan folds cp into it).
  Fsdp2Spec fsdp2;
  int fsdp2_shard() const { return dp / fsdp2.replicate * cp; }
  // Optimizer offload to host memory (costmodel/offload_cost.hpp, docs/offload.md); none by
  // default.
  cost::OffloadSpec offload;
  // Gradient reduction bucket; a scenario that gives none gets its framework's
  // (FrameworkSpec::gradient_bucket; 0: every gradient of a stage in one bucket).
  cost::Bytes dp_bucket{0};
  // How gradients are grouped into buckets (strategies/data_parallel/megatron_buckets.hpp):
  // whole layers on every stage (kLayers), or megatron-core 0.19.2's DDP buffers (kMegatron:
  // parameter tensors in reverse order, buckets only on the first pipeline stage).
  DpBucketLayout dp_bucket_layout = DpBucketLayout::kLayers;
  // Megatron's --overlap-param-gather: the distributed optimizer's parameter all-gather issued
  // per bucket at the next step's forward, each bucket waited on by the forward that uses it.
  bool overlap_param_gather = false;
  // Mixture of experts, laid out as Megatron-core's MoE parallel folding (arXiv 2504.14960):
  // attention runs on tp x cp x dp, the experts on etp x ep x edp over the same GPUs of a stage
  // (edp = tp cp dp / (etp ep)); each rank holds experts / ep of them, each split over etp.
  int ep = 1;
  int etp = 0;  // 0: tp (Megatron-core's default for --expert-tensor-parallel-size)
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  // Megatron's --moe-shared-expert-overlap: the shared experts computed under the dispatch.
  bool moe_shared_expert_overlap = false;
  int expert_tp() const { return etp > 0 ? etp : tp; }
  // Expert data-parallel ranks: the GPUs of a stage holding the same experts.
  int edp() const { return tp * cp * dp / (expert_tp() * ep); }
};

// AdamW; Distributed Shampoo (blocks processed one by one; Shi et al. 2023, arXiv 2309.06497);
// DASH (blocks stacked into 3-D tensors for batched kernels; arXiv 2602.02016).
enum class OptimizerKind { kAdamW, kShampoo, kDash };
enum class RootSolver { kEvd, kCoupledNewton, kNewtonDb, kChebyshev };
enum class RootScaling { kFrobenius, kPowerIteration };
// DASH's stacking: none (block by block, Distributed Shampoo), layer (DashLayerwise: the blocks
// of one layer in one stack), gpu (DashGpu: every block of a GPU in one stack per size).
enum class Stacking { kNone, kLayer, kGpu };
const char* optimizer_name(OptimizerKind k);
const char* root_solver_name(RootSolver s);
const char* stacking_name(Stacking s);

struct OptimizerSpec {
  OptimizerKind kind = OptimizerKind::kAdamW;
  // Shampoo and DASH:
  int block_size = 1024;           // max_preconditioner_dim
  int precondition_frequency = 1;  // inverse roots every f steps
  RootSolver solver = RootSolver::kCoupledNewton;
  int iterations = 10;  // Newton iterations (per run for Newton-DB)
  int chebyshev_degree = 60;
  RootScaling scaling = RootScaling::kFrobenius;
  cost::Dtype precision = cost::Dtype::kFp32;  // of the root solver's matmuls
  Stacking stacking = Stacking::kNone;
  // fp32 matmuls (factor updates, preconditioning, fp32 solvers) run on TF32 tensor cores, as
  // PyTorch's torch.backends.cuda.matmul.allow_tf32 = True makes them (DASH's runs set it).
  bool allow_tf32 = false;
  // Host time the optimizer's eager framework spends on one operation before and besides the
  // CUDA launch (Python, the PyTorch dispatcher, the allocator); the launch itself is the
  // device's kernel_launch_overhead. Default 6 us: the middle of the 4-9 us that the per-op CPU
  // costs of eager PyTorch under no_grad add up to (Python ~1, binding ~1, dispatcher 1-2,
  // backend selection 1-5 us; jiahuanglin.xyz, "From PyTorch op to kernel launch", which puts the
  // whole path, launch and autograd included, at 5-25 us). Zero leaves only the device's launch
  // overhead per op (a C++ loop); syncs still drain the GPU. See costmodel/eager_issue.hpp.
  sim::Time host_op_overhead = sim::Time::us(6);
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source_file;  // where it was read from, for messages
  ModelSpec model;
  cost::ClusterSpec cluster;
  TrainingSpec training;
  ParallelSpec parallel;
  OptimizerSpec optimizer;
  // False when `plan` read it without a "parallel" section (ScenarioLimits::layout_optional):
  // the layout is the planner's to choose, and the scenario has no "yours" row.
  bool layout_given = true;

  // Micro-batches per pipeline per step: global_batch / (micro_batch * dp).
  // GPUs holding the same weights of a stage: data-parallel and context-parallel ranks.
  int replicas() const { return parallel.dp * parallel.cp; }
  int micro_batches() const { return training.global_batch / (training.micro_batch * parallel.dp); }
  // The virtual stage that `chunk` of pipeline stage `stage` runs, and back (places_chunks_in_v).
  int virtual_stage(int stage, int chunk) const {
    return virtual_stage_of(parallel.schedule, parallel.pp, stage, chunk);
  }
  int stage_of_virtual_stage(int vs) const {
    return strat::stage_of_virtual_stage(parallel.schedule, parallel.pp, vs);
  }
  int chunk_of_virtual_stage(int vs) const { return vs / parallel.pp; }
  // The stage holding the output head, the loss (and MTP modules): pp - 1, or 0 under a V.
  int head_stage() const { return head_stage_of(parallel.schedule, parallel.pp); }
  // Whether dualpipev's forward-backward pairs overlap: parallel.overlap_forward_backward, or
  // the framework's default when unset.
  bool overlaps_forward_backward() const {
    return parallel.overlap_forward_backward.value_or(training.framework.overlaps_forward_backward);
  }
  // Transformer layers of virtual stage vs (in the order the layers run: virtual_stage), and the
  // index of its first layer.
  int virtual_stage_layers(int vs) const {
    return parallel.stage_layers.empty() ? model.layers / (parallel.pp * parallel.chunks)
                                         : parallel.stage_layers[static_cast<std::size_t>(vs)];
  }
  int first_layer_of_virtual_stage(int vs) const {
    if (parallel.stage_layers.empty()) return vs * virtual_stage_layers(vs);
    int first = 0;
    for (int v = 0; v < vs; ++v) first += parallel.stage_layers[static_cast<std::size_t>(v)];
    return first;
  }
  // Transformer layers a pipeline stage holds, over all its chunks.
  int stage_layer_count(int stage) const {
    int n = 0;
    for (int c = 0; c < parallel.chunks; ++c) n += virtual_stage_layers(virtual_stage(stage, c));
    return n;
  }
  double tokens_per_step() const {
    return static_cast<double>(training.global_batch) * model.seq_len;
  }
  // With FP8: whether some transformer layers stay in bf16 (training.fp8.bf16_layers_at_*).
  bool has_bf16_layers() const {
    return training.fp8.enabled() &&
           (training.fp8.bf16_layers_at_start > 0 || training.fp8.bf16_layers_at_end > 0);
  }
};

// The same scenario with 16-bit linears: what its bf16 layers run.
inline Scenario without_fp8(Scenario s) {
  s.training.fp8 = Fp8Spec{};
  return s;
}

}  // namespace parasim::strat
