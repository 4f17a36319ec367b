#pragma once
// Internal to strategies/layers: torchtitan's Llama TransformerBlock on one TP rank for one
// micro-batch, eager and under torch.compile (training.framework "kernels": "torchtitan", and
// "compile"; docs/pytorch-native.md, "torch.compile"). Not a public header.
//
// Eager (torchtitan 0.3.0: models/llama3/model.py Llama3TransformerBlock.forward, h = x +
// attention(attention_norm(x)); out = h + feed_forward(ffn_norm(h)); models/common/attention.py
// FusedQKVLinear (fuse_qkv=True in every Llama 3 config, models/llama3/__init__.py) and
// GQAttention.forward; models/common/rope.py ComplexRoPE.apply_rotary_emb; models/common/
// feed_forward.py FeedForward.forward, w2(silu(w1(x)) * w3(x)); nn.RMSNorm, which torch 2.15
// runs as aten::_fused_rms_norm, one kernel forward, its backward an input-gradient and a
// weight-gradient kernel [inference from torch/_decomp/decompositions.py's _fused_rms_norm_backward
// pair]). Kernels per block at tp 1, FlashAttention, GQA (a != kv), bf16:
//   forward  (21)  norm; wqkv GEMM; 3 copies (split views made contiguous: q, k, v); RoPE per q
//                  and k: .float(), the complex multiply, type_as (3 each, 6); attention (1); wo
//                  GEMM; residual add; norm; w1 GEMM; w3 GEMM; silu; mul; w2 GEMM; residual add.
//   backward (28)  w2 (2 GEMMs); mul's two gradients; silu's backward; w3, w1 (4 GEMMs); the sum of
//                  their input gradients; norm backward (2); the residual gradient add; wo (2);
//                  attention (1); RoPE backward per q and k (grad to fp32, times conj(cache), back
//                  to bf16: 6); the split's backward cat of dq, dk, dv; wqkv (2); norm backward
//                  (2); the residual gradient add.
// Compiled (torchtitan distributed/compile.py apply_compile: each block compiled on its own,
// fullgraph, Inductor; GEMMs and attention stay extern kernels, Inductor fuses the pointwise and
// reduction ops between them, one Triton kernel per group [inference from Inductor's scheduler:
// vertical fusion of producer and consumer, horizontal fusion only of equal iteration sizes]):
//   forward  (12)  norm (the region's first op: its input comes from the previous region); wqkv;
//                  RoPE with the split's copies (and the query/key norms): one kernel for q, one
//                  for k and v (one for all three when a == kv); attention; wo; the residual add
//                  fused with ffn_norm (reads x and the projection, writes h and its norm); w1;
//                  w3; silu * mul (one kernel); w2; the last residual add (the next block is
//                  another region).
//   backward (20)  w2; silu * mul backward in one kernel (AOTAutograd's min-cut partition saves the
//                  two GEMM outputs and recomputes silu inside it); w3, w1; ffn_norm's input
//                  gradient fused with the sum of the two input gradients and the residual
//                  gradient add (one row reduction), its weight gradient (a split column
//                  reduction: 2 kernels); wo; attention; RoPE backward written into the joined
//                  dqkv (as the forward: 2 kernels, 1 when a == kv); wqkv; attention_norm's input
//                  gradient fused with the residual gradient add, its weight gradient (2).
// Collectives (tp > 1) where Megatron's program puts them (layer_program.hpp); with tp > 1
// the fused residual add + norm sits after the reduce-scatter (first kernel of the MLP block).
// Left out (docs/pytorch-native.md): activation memory stays Korthikanti's (the eager block's
// fp32 RoPE intermediates and the min-cut's recomputation instead of saving are not itemised);
// FP8 cast kernels are not fused under compile; MoE and MLA blocks keep Megatron's program.
// Context parallelism replaces the SDPA by cp_attention.hpp's core (the block's kernels stay).

#include <vector>

#include "strategies/layers/step_writer.hpp"

namespace parasim::strat::detail {

// Whether a layer of `sc` runs torchtitan's block (dense, no MLA, a torchtitan framework).
bool uses_torchtitan_block(const Scenario& sc, bool moe);

void torchtitan_attention_forward(StepWriter& w, const Dims& x, bool compiled,
                                  std::vector<LayerStep>& out);
void torchtitan_mlp_forward(StepWriter& w, const Dims& x, bool compiled,
                            std::vector<LayerStep>& out);
void torchtitan_mlp_backward(StepWriter& w, const Dims& x, bool compiled,
                             std::vector<LayerStep>& out);
// `recompute_core`: the unfused core rerun first (Megatron's selective core_attn).
void torchtitan_attention_backward(StepWriter& w, const Dims& x, bool compiled, bool recompute_core,
                                   std::vector<LayerStep>& out);

}  // namespace parasim::strat::detail
