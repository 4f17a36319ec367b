#pragma once
// parasim::cost activation checkpointing as the trainers offer it — the bytes one transformer
// layer keeps for its backward, per micro-batch and GPU, under the policies beyond Korthikanti's
// three (activation_memory.hpp): Megatron-core's selective recompute by module and torchtitan's
// per-op selective activation checkpointing. docs/activation-checkpointing.md has the tables.
//
// Megatron-core 0.19.2 (megatron/core/transformer/transformer_config.py, recompute_modules;
// transformer_layer.py, TransformerLayer.__init__ and _forward_mlp):
//   "core_attn"  the attention core checkpointed (Korthikanti's selective: the s^2 terms dropped).
//   "layernorm"  input_layernorm and pre_mlp_layernorm run under CheckpointWithoutOutput: their
//                outputs ("qkv input", "fc1 input") are discarded after the forward and the two
//                norms rerun in the backward from their kept inputs.
//   "mlp"        the dense MLP under tensor_parallel.checkpoint(mlp, pre_mlp_layernorm_output):
//                only its input ("fc1 input") kept; fc1, the activation and fc2 rerun (MoE layers
//                ignore it: `if not self.is_moe_layer`).
// Terms are activation_terms_per_layer's, divided by t as activation_bytes_per_layer divides them.
//
// torchtitan (0.3.0: torchtitan/distributed/activation_checkpoint.py, SelectiveAC and
// _get_default_save_ops; 0.2.2: the same file's _apply_op_sac with
// models/llama3/infra/parallelize.py's _op_sac_save_list), per transformer block:
//   * the block's input is the checkpoint's input: kept;
//   * aten.mm outputs are MUST_SAVE except every second one: a counter per block forward counts
//     the mms and an even count is recomputed. torchtitan's dense blocks run wq, wk, wv, wo, then
//     w1, w3, w2 (feed_forward.py: w2(silu(w1(x)) * w3(x))) or fc1, fc2: saved are wq, wv, w1, w2
//     (SwiGLU) or wq, wv, fc1 (GeLU); wk, wo, w3 (or fc2) rerun;
//   * SDPA (flash, efficient, cuDNN) outputs saved: the output and FlashAttention's logsumexp
//     (fp32, one per head and token);
//   * _c10d_functional.reduce_scatter_tensor outputs saved (sequence parallelism); all_gather and
//     all_reduce are not in the list: they rerun in the recompute;
//   * everything else (norms, RoPE, SiLU, products, residual adds) reruns.
// A TP-partial mm output (w2 before its reduce-scatter or all-reduce) is [s, b, h] on every rank.
// The recompute brings back, beside the saved tensors, what autograd's backward reads of the
// rerun ops (torchtitan's models/common/attention.py GQAttention.forward and feed_forward.py):
// the norms' outputs as the linears read them (all-gathered, [s, b, h], under sequence
// parallelism), Q and K after RoPE, the contiguous copy of the SDPA output wo reads, the second
// norm's input, SiLU's output, W3's output and the product (or the GeLU output).
// Modelled for dense blocks without dropout, biases or FP8 linears (the scenario's rules refuse
// the rest); the mm parity is torchtitan's separate wq/wk/wv layout, not a fused QKV.

#include <vector>

#include "costmodel/activation_memory.hpp"

namespace parasim::cost {

// The Megatron recompute modules parasim models (transformer_config.py's choices; the others
// are refused by the scenario's rules). Default: {"core_attn"}, Megatron's.
struct RecomputeModules {
  bool core_attn = true;
  bool mlp = false;
  bool layernorm = false;
  // MoE layers (strategies/layers/moe_layer.hpp): the routed experts' activation output
  // discarded and rerun before fc2's backward (experts.py, CheckpointWithoutOutput), and the
  // shared experts checkpointed (moe_layer.py, tensor_parallel.checkpoint).
  bool moe_act = false;
  bool shared_experts = false;
  bool moe = false;  // the whole MoE layer checkpointed (moe_layer.py, moe_layer_recompute)
  // MLA's up projections and RoPE (multi_latent_attention.py, qkv_up_checkpoint): q, k, v
  // discarded after the core's forward and rerun before its backward.
  bool mla_up_proj = false;
  bool operator==(const RecomputeModules&) const = default;
};

// Megatron's --recompute-method under --recompute-granularity full (megatron-core 0.19.2,
// megatron/core/recompute.py, checkpointed_forward): kUniform checkpoints groups of
// --recompute-num-layers layers; kBlock checkpoints the first --recompute-num-layers layers of
// each (virtual) stage one by one and runs the rest without recompute. kEveryNth is torchtitan
// 0.2.2's layer selective AC (activation_checkpoint.selective_ac_option = "N"): every N-th block
// of a rank checkpointed alone, the others without recompute.
// strategies/layers/checkpoint_groups.hpp says which layer does what.
enum class RecomputeMethod { kUniform, kBlock, kEveryNth };

// Bytes kept under --recompute-granularity selective with `modules`. With {core_attn} it equals
// activation_bytes_per_layer(shape, Recompute::kSelective).
Bytes selective_bytes_per_layer(const ActivationShape& shape, const RecomputeModules& modules);

// How a per-op term divides over tensor parallelism.
enum class SacSplit {
  kTensorParallel,  // heads or ffn columns: divided by t
  kSequence,        // replicated, sequence-sharded under SP: divided by t with SP only
  kWhole            // a TP-partial GEMM output: [s, b, h] on every rank
};

struct SacTerm {
  const char* name;
  double bytes;  // full size, before the split
  SacSplit split;
  bool saved;  // in the checkpoint's cache from forward to backward; else recomputed
};

// torchtitan's per-op terms of one dense block, in forward order. Throws std::invalid_argument
// for a shape it does not model (dropout, linear_input_bytes != 2).
std::vector<SacTerm> per_op_sac_terms(const ActivationShape& shape);
// What one GPU keeps from the forward to the backward (activation_bytes_per_layer's kPerOp).
Bytes per_op_sac_saved_bytes(const ActivationShape& shape);
// The saved bytes plus what the recompute brings back inside the backward.
Bytes per_op_sac_backward_bytes(const ActivationShape& shape);

}  // namespace parasim::cost
