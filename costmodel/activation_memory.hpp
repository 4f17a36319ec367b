#pragma once
// parasim::cost activation memory — bytes of activations one transformer layer keeps for its
// backward pass, per micro-batch, per GPU.
//
// Source: Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
// MLSys 2023, arXiv:2205.05198, Section 4 (4.1 per-layer accounting, 4.2 tensor parallel, 4.2.2
// sequence parallel, 4.3 selective recompute). Notation: s sequence length, b micro-batch, h
// hidden, a attention heads, t tensor-parallel size. Activations are 16-bit (2 bytes per
// element); dropout masks 1 byte per element.
//
// The total is built from one named term per stored tensor (activation_terms_per_layer), so that
// it generalises beyond the paper's GPT case. Terms, full (unsharded) sizes:
//   attention block
//     "ln1 input"          2sbh    layer input, kept by the first norm       [replicated*]
//     "qkv input"          2sbh    norm output, input of the QKV GEMM        [replicated*]
//     "q"                  2sbh    input of QK^T                             [sharded]
//     "k"                  2sbh*kv/a                                         [sharded]
//     "softmax output"     2as^2b                                            [sharded, core]
//     "softmax dropout mask" as^2b (dropout only)                            [sharded, core]
//     "softmax dropout output" 2as^2b (dropout only; input of attention x V) [sharded, core]
//     "v"                  2sbh*kv/a                                         [sharded]
//     "out-proj input"     2sbh    context, input of the output projection  [sharded]
//     "attn dropout mask"  sbh     (dropout only)                            [replicated*]
//   MLP block
//     "ln2 input"          2sbh                                              [replicated*]
//     "fc1 input"          2sbh    norm output (gate/up input for SwiGLU)    [replicated*]
//     gelu:   "gelu input" 2sbf, "fc2 input" 2sbf                           [sharded]
//     swiglu: "gate output" 2sbf, "up output" 2sbf, "down input" 2sbf       [sharded]
//     "mlp dropout mask"   sbh     (dropout only)                            [replicated*]
//   [sharded]     divided by t under tensor parallelism (heads / ffn columns are split).
//   [replicated*] the same on every TP rank; divided by t only with sequence parallelism, which
//                 shards these along s (the paper's SP stores the sharded norm output and
//                 re-all-gathers it in backward). With SP every term is divided by t.
//   [core]        the attention core, dropped (recomputed) by selective recompute.
// For the paper's GPT layer (gelu, a == kv, f = 4h, dropout) the terms sum to the paper's
// attention 11sbh + 5as^2b, MLP 19sbh, norms 4sbh, i.e. sbh(34 + 5as/h) (eq. 1); with TP
// sbh(10 + 24/t + 5as/(ht)) (eq. 2); with TP+SP (sbh/t)(34 + 5as/h) (eq. 4); selective recompute
// drops the 5as^2b terms: sbh(10 + 24/t) and 34sbh/t (eq. 6).
//
// Generalisations (ours, documented choices):
//   * GQA: K and V scale by kv_heads/heads. TP sharding of K, V assumes kv_heads % t == 0
//     (Megatron's requirement); replicated KV heads when kv_heads < t are not modelled.
//   * MLP width f replaces 4h: gelu input 2sbf and fc2 input (gelu output) 2sbf.
//   * SwiGLU (Llama): the shared gate/up input 2sbh, the gate and up projections' outputs 2sbf
//     each (SiLU and the product are recomputed from them in backward, as Megatron's fused
//     bias_swiglu does), and the product, input of the down projection, 2sbf: 6sbf in all.
//   * dropout == false: the three masks vanish, and attention x V reads the softmax output
//     itself, so the attention core is the softmax output 2as^2b alone.
//   * FlashAttention stores no s^2 tensors; its footprint equals Recompute::kSelective here.
//   * FP8 linears (Transformer Engine) keep their inputs in FP8: linear_input_bytes below.
// Full recompute keeps only the layer input, 2sbh (the paper's figure, without SP). With SP
// Megatron checkpoints the sequence-sharded hidden states, so we return 2sbh/t. (Megatron's
// optional distribute_saved_activations, which shards it /t without SP, is not modelled.)
//
// Pipeline and micro-batch counts are the caller's: these are per layer, per micro-batch.

#include <vector>

#include "costmodel/units.hpp"

namespace parasim::cost {

// Shape of one layer's activations. Invariants (checked, std::invalid_argument): all sizes > 0,
// tp >= 1.
struct ActivationShape {
  double seq_len = 0;      // s, tokens per sequence
  double micro_batch = 0;  // b, sequences per micro-batch
  double hidden = 0;       // h
  double heads = 0;        // a, query heads
  double kv_heads = 0;     // KV heads (== heads for multi-head attention)
  double query_width = 0;  // a x d, the queries' width; 0: h (d = h / a, as most models)
  double ffn_hidden = 0;   // f (4h for GPT)
  bool swiglu = false;     // MLP with gate, up and down projections (Llama)
  bool dropout = true;     // dropout masks stored (GPT); Llama trains without dropout
  int tp = 1;              // t
  bool sequence_parallel = false;
  // FP8 linears (costmodel/precision/quantization.hpp, saved_linear_input_bytes): bytes per
  // element of the inputs the four linears keep for their wgrad ("qkv input", "out-proj input",
  // "fc1 input", "fc2 input" / "down input"): 2 in 16-bit training, 1 + scale bytes under
  // Transformer Engine's FP8 recipes. When it is not 2 and the attention core's backward reads
  // its output (FlashAttention), that output is kept in bf16 too ("attention output").
  double linear_input_bytes = 2;
  bool attention_keeps_output = false;
  // torchao's float8 linears (torchtitan): each linear's GEMM is aten._scaled_mm, which
  // torchtitan's per-op policy saves (activation_checkpointing.hpp, per_op_sac_terms).
  bool scaled_mm_linears = false;
};

// kPerOp: torchtitan's per-op selective activation checkpointing (activation_checkpointing.hpp).
enum class Recompute { kNone, kSelective, kFull, kPerOp };
// "none", "selective", "full", "per-op".
const char* recompute_name(Recompute r);

// One stored tensor. `bytes` is its full size, before any TP/SP division.
struct ActivationTerm {
  const char* name;
  double bytes;
  bool sharded_by_tp;   // divided by t under tensor parallelism; all terms divide by t with SP
  bool attention_core;  // dropped by selective recompute
};

// The terms of one layer, in forward order (see the table above). Sizes are unsharded.
std::vector<ActivationTerm> activation_terms_per_layer(const ActivationShape& shape);

// Bytes one GPU keeps for one layer and one micro-batch, after TP/SP sharding and recompute.
Bytes activation_bytes_per_layer(const ActivationShape& shape, Recompute recompute);

}  // namespace parasim::cost
