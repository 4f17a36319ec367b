#pragma once
// parasim::strat layer programs — what one tensor-parallel rank runs for one transformer layer
// (and for the embedding and the output head), forward and backward, for one micro-batch.
//
// A program is a list of steps: compute blocks (consecutive kernels on the compute stream,
// summed: their order inside a block does not change the simulated time because the block is
// bounded by collectives that the compute stream waits for) and tensor-parallel collectives.
//
// Kernels per layer (Megatron-LM, Shoeybi et al. 2019 arXiv 1909.08053; Korthikanti et al. 2022
// arXiv 2205.05198), b micro-batch, s sequence, h hidden, a heads, k kv heads, d = h/a, f ffn,
// t tensor parallel:
//   attention block: norm; QKV GEMM [bs x h] x [h x (a+2k)d/t]; the attention core, unfused or
//     FlashAttention, as the framework runs it (attention_core.hpp: QK^T and AV batched GEMMs of
//     ba/t problems, scale-mask-softmax, dropout and the context copy); output projection
//     [bs x h/t] x [h/t x h]; bias-dropout-add.
//   MLP block: norm; fc1 [bs x h] x [h x f/t] (x2 for SwiGLU gate+up); activation; fc2
//     [bs x f/t] x [f/t x h]; bias-dropout-add.
//   collectives: without SP an all-reduce of bsh after each block, forward and backward (two
//     each); with SP an all-gather before and a reduce-scatter after each block (same bytes).
// Backward: every GEMM becomes two (input gradient and weight gradient), memory-bound kernels
// move twice their forward bytes, the attention core's two batched GEMMs become four (its memory
// passes: attention_core.hpp).
// Kernels as Megatron issues them (research in docs/frameworks.md; counts per layer at tp 1
// with biases, dropout and the unfused core: 14 forward, 33 backward): the QKV linear's bias in
// the GEMM or an add (KernelFusions::linear_bias_in_gemm); bias-dropout-add and bias-GeLU fused
// or apart; backward: bias gradients as reductions over the tokens, apex's norm backward as 3
// kernels, the residual stream's two gradient adds, the QKV gradients joined (cat), the scores'
// scaling by baddbmm's alpha; the framework's syncs before the MLP (LayerStep::syncs_after).
// The head is Megatron's vocab-parallel cross entropy kernel by kernel, the embedding its lookups,
// dropout and transpose; low-rank and TSP layers keep their own kernel lists.
// Recompute: selective re-runs the attention core inside the backward; full re-runs the whole
// forward (collectives included) before the backward of each layer.
// Simplifications (documented, not hidden): the SP backward's extra all-gather of the stored
// sequence-sharded input for weight gradients is not modelled; no kernel fusion beyond the above.

#include <optional>
#include <string>
#include <vector>

#include "costmodel/activation_memory.hpp"
#include "costmodel/collective_cost.hpp"
#include "costmodel/cost_model.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::strat {

struct ComputeBlock {
  std::string label;    // "attn", "mlp", "embed", "head"
  sim::Time time;       // GPU time: each kernel's body plus the queued-kernel gap
  sim::Time last_body;  // GPU time of its last kernel (body plus gap)
  cost::Flops flops;    // floating-point operations executed (recompute included)
  int kernels = 0;
};

struct CollectiveStep {
  std::string label;  // "attn all-reduce"
  cost::CollectiveKind kind;
  cost::Bytes message;  // nccl-tests S
  // DeepEP's dispatch or combine (the flex dispatcher): planned from the routing over the
  // group's placement (cost::plan_token_exchange) instead of an NCCL plan of `message`.
  std::optional<cost::TokenExchange> exchange;
};

// The plan of one collective step over `group`: one place for the builder, zero bubble's costs
// and the planner's screen.
cost::CollectivePlan plan_step(const cost::CostModel& costs, const CollectiveStep& step,
                               const cost::GroupPlacement& group);

// Which group a collective runs over, and so on which stream it is issued.
// kWeights: TSP's weight transfers, over the tensor-parallel group on their own stream.
// Mixture of experts (moe_layer.hpp; RankLayout's folding): kExpertParallel over the ep ranks
// holding the other experts, kExpertTensor over the etp ranks splitting the same experts,
// kExpertGrid over both (etp x ep, the allgather dispatcher's group); on the ep stream.
// kContextParallel: the cp ranks of one replica; a2a+p2p's kContextAllToAll: the cp_a2a_size
// consecutive ones, kContextRing: the cp / cp_a2a_size ones of stride cp_a2a_size
// (cp_attention.hpp); all on the cp stream.
enum class StepGroup : std::uint8_t {
  kTensorParallel,
  kContextParallel,
  kWeights,
  kExpertParallel,
  kExpertTensor,
  kExpertGrid,
  kContextAllToAll,
  kContextRing
};

// A context-parallel collective's group among the cp consecutive replicas of one cp group: `size`
// members `stride` apart from the first (Megatron-LM's create_hierarchical_groups: level 0
// consecutive, level 1 strided by the level-0 size). Whole group {cp, 1}; kContextAllToAll
// {cp_a2a_size, 1}; kContextRing {cp / cp_a2a_size, cp_a2a_size}.
struct CpGroupShape {
  int size = 1;
  int stride = 1;
};
bool is_context_parallel(StepGroup g);
CpGroupShape cp_group_shape(const ParallelSpec& p, StepGroup g);

struct LayerStep {
  bool is_collective = false;
  ComputeBlock compute;                          // when !is_collective
  CollectiveStep collective;                     // when is_collective
  StepGroup group = StepGroup::kTensorParallel;  // collectives: the group (and stream)
  // Steps of the same list this one waits for (indices of earlier steps). Empty: the previous
  // step, so a list is a chain unless it says otherwise (ring attention overlaps its K/V
  // transfers with compute this way).
  std::vector<int> after;
  // Host syncs right after this step (the framework's, FrameworkCounts::layer_syncs): the host
  // waits until this step and everything before it has run, then pays each sync's cost.
  int syncs_after = 0;
  // A step of the recomputed forward inside a backward (full recompute): issued as a forward op
  // with autograd recording.
  bool recompute = false;
  // Collectives: a transfer that takes no SMs from the compute beside it (a copy engine's, or a
  // kernel on SMs the GEMMs were launched without: tp_overlap.hpp), so it does not slow that
  // compute (sim::Group::copy_engine).
  bool copy_engine = false;
};

// What a layer's FP8 weights cost once a step (TE casts them on a step's first micro-batch and
// keeps the copies; priced with the optimizer step, where the cast of the next step's weights
// sits in a steady state): the cast kernels' GPU time (bodies and gaps), their count, and the
// weight elements quantised.
struct QuantizedWeightStep {
  sim::Time time;
  int kernels = 0;
  double elements = 0;         // dense linears' weights on this rank
  double expert_elements = 0;  // the local experts' (MoE)
  // The recipe's other kernels in one micro-batch's forward and backward (inputs, output
  // gradients; torchao: the weights too), for reports: they are already in the passes.
  sim::Time micro_batch_kernels;

  // Adds `times` copies of `o` (a stage's layers, a head's modules).
  void add(const QuantizedWeightStep& o, int times = 1) {
    time += o.time * times;
    kernels += o.kernels * times;
    elements += o.elements * times;
    expert_elements += o.expert_elements * times;
    micro_batch_kernels += o.micro_batch_kernels * times;
  }
};

struct LayerProgram {
  std::vector<LayerStep> forward;
  std::vector<LayerStep> backward;  // recompute steps first, when any
  // The backward split for zero-bubble schedules (Qi et al. 2024, arXiv 2401.10241): input
  // gradients (with the collectives) in backward_input, weight-gradient GEMMs in weight_grad.
  std::vector<LayerStep> backward_input;
  std::vector<LayerStep> weight_grad;
  // The framework's gradient accumulation over micro-batches (FrameworkCounts::
  // grad_accumulation): one add kernel per accumulated parameter tensor, after the layer's
  // backward (transformer layers only; empty when nothing is accumulated).
  std::vector<LayerStep> grad_accumulation;
  cost::Flops model_flops;  // forward + backward without recompute, for MFU
  // Activation memory of one micro-batch on one TP rank: what a forward keeps for its backward
  // (after the recompute policy), and everything the layer produces (what a recompute brings
  // back inside the backward). Korthikanti et al. for dense layers; itemised per tensor for
  // low-rank ones (low_rank_layer.hpp).
  double activation_stored_bytes = 0;
  double activation_full_bytes = 0;
  QuantizedWeightStep fp8_weights;  // empty without FP8
};

// What a stage's FP8 weights (the sum of its layers' fp8_weights) change in memory, per GPU:
// the copies Transformer Engine caches over micro-batches (quantization.hpp,
// cached_weight_bytes_per_element), or, with training.fp8.param_gather, the 16-bit parameters
// replaced by FP8 ones (fp8_parameter_bytes_per_element; sharded under ZeRO-3). 0 without FP8.
double fp8_weight_memory_bytes(const Scenario& scenario, const QuantizedWeightStep& weights);
// Bytes per element of a weight in the distributed optimizer's parameter all-gather: 1 for FP8
// linear weights under training.fp8.param_gather, the training precision's otherwise.
double gathered_weight_bytes(const Scenario& scenario, bool fp8_linear);
// Bytes the distributed optimizer's parameter all-gather moves for `params` parameters of which
// `fp8_elements` are FP8 linear weights (at most all of them).
double gathered_parameter_bytes(const Scenario& scenario, double params, double fp8_elements);
// Bytes per element of ZeRO-3's per-layer gathers: the training precision's, or under torchao's
// float8 all-gather (fp8.param_gather) the layer's weight matrices in FP8 and the rest (norms,
// biases) in it, each unit the layer's mix.
double zero3_gathered_element_bytes(const Scenario& scenario);

// A layer's MLP: dense, or a mixture of experts (moe_layer.hpp; ModelSpec::MoeSpec::is_moe_layer
// says which layers).
enum class LayerKind : std::uint8_t { kDense, kMoe };

// One transformer layer on one TP rank for one micro-batch.
LayerProgram transformer_layer_program(const Scenario& scenario, const cost::CostModel& costs,
                                       LayerKind kind = LayerKind::kDense);
// The input embedding (first stage) and the final norm, output head and loss (last stage).
LayerProgram embedding_program(const Scenario& scenario, const cost::CostModel& costs);
// The head's activation bytes are its logits and fp32 loss inputs, and with model.mtp_layers the
// MTP modules run inside it (mtp_module.hpp).
LayerProgram head_program(const Scenario& scenario, const cost::CostModel& costs);

// The Korthikanti activation shape of one layer of this scenario (per micro-batch, per rank: with
// context parallelism the sequence is this rank's share, s / cp).
cost::ActivationShape activation_shape(const Scenario& scenario);

// Parameters one TP rank holds for one layer: sharded matrices and column-parallel biases
// divided by t; norms and row-parallel biases replicated (Megatron's layout).
double layer_params_per_tp_rank(const ModelSpec& model, int tp);
// The attention block's parameters on one tp rank: matrices / tp; MLA's down projections and
// their norms whole on every rank (duplicated).
double attention_params_per_tp_rank(const ModelSpec& model, int tp);
// A layer's parameters on one rank: dense layers as layer_params_per_tp_rank; an MoE layer
// holds its attention and norms (/ tp as Megatron's), the router (replicated), the shared experts
// (/ tp) and its experts / ep local experts, each / etp. `expert` part: the local experts alone
// (their gradients reduce over the expert data-parallel group).
struct LayerParams {
  double dense = 0;   // reduced over dp x cp
  double expert = 0;  // reduced over edp
  double total() const { return dense + expert; }
};
LayerParams layer_params_on_rank(const ModelSpec& model, const ParallelSpec& parallel, int layer);
// Sum over the layers [first, first + count).
LayerParams layers_params_on_rank(const ModelSpec& model, const ParallelSpec& parallel, int first,
                                  int count);

// The input embedding table, vocab-parallel (/t), and learned positions (replicated) on the
// first stage.
double input_embedding_params_per_tp_rank(const ModelSpec& model, int tp);
// DeepSeek-V3's multi-token prediction modules on the last stage (mtp_module.hpp), per module:
// three norms, the 2h -> h projection (/ tp) and a layer of the model's last layer's kind, its
// experts in `expert`. With tp = ep = etp = 1 the sum is ModelSpec::mtp_params().
LayerParams mtp_params_on_rank(const ModelSpec& model, const ParallelSpec& parallel);
// Final norm and output head on the head's stage (`head_stage`: pp - 1, or 0 under a V-shaped
// schedule or without pipelining; Scenario::head_stage): the head's own table (/t) when untied,
// or a copy of the tied table when it lives on another stage (head_stage > 0, as Megatron keeps
// it); with MTP modules their dense parameters (mtp_params_on_rank) and, with head_stage > 0 and
// an untied head, that stage's own copy of the embedding table the modules read.
double head_params_per_tp_rank(const ModelSpec& model, int tp, int head_stage);
// Both, as held by `stage` (0..pp-1).
double embedding_params_per_tp_rank(const ModelSpec& model, int tp, int stage, int head_stage);

// The parameter tensors of one layer on one TP rank in Megatron's layout, by submodule in the
// order the forward uses them: input norm (weight, and bias for LayerNorm), QKV (weight / t and,
// with linear biases, bias / t), output projection (weight / t, bias replicated), post-attention
// norm, fc1 (SwiGLU's gate and up together; as QKV), fc2 (as the projection); elements per
// tensor. They add up to layer_params_per_tp_rank. Low-rank layers are counted as the dense
// layer they replace (a simplification).
std::vector<std::vector<double>> layer_module_tensors_per_tp_rank(const ModelSpec& model, int tp);
// Parameter tensors of one layer (layer_module_tensors_per_tp_rank): 12 for GPT, 6 for Llama.
int layer_parameter_tensors(const ModelSpec& model);
// The weight matrices' parameters of one layer on one TP rank.
double layer_matrix_params_per_tp_rank(const ModelSpec& model, int tp);
// Parameter tensors of the embedding and head held by `stage`: the word table and learned
// positions on the first stage; the final norm and the head's own table on `head_stage`.
int embedding_parameter_tensors(const ModelSpec& model, int stage, int head_stage);

// What a virtual stage without transformer layers runs instead (parallel.stage_layers 0 with
// interleaving): Megatron's no-op layer, a clone of the hidden states (megatron/legacy/model/
// transformer.py, NoopTransformerLayer.forward: hidden_states.clone(); read + write of this
// rank's b x s x h activations, s / t with sequence parallelism). Forward only: the clone's
// backward passes the gradient through without a kernel.
std::vector<LayerStep> noop_layer_steps(const Scenario& scenario, const cost::CostModel& costs);

// The gradient adds of one layer per micro-batch (LayerProgram::grad_accumulation).
std::vector<LayerStep> grad_accumulation_steps(const Scenario& scenario,
                                               const cost::CostModel& costs);

}  // namespace parasim::strat
