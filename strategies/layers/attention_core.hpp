#pragma once
// Internal to strategies/: the attention core (scores, softmax, dropout, context) of one layer on
// one TP rank, forward and backward, as the framework runs it. Shared by the full-rank and the
// low-rank layer programs. Not a public header.
//
// Unfused (Megatron-LM core, megatron/core/transformer/dot_product_attention.py,
// DotProductAttention .forward; megatron/core/fusions/fused_softmax.py, FusedScaleMaskSoftmax), per
// attention problem (batch x heads / t of them) with s_q x s_k scores of e bytes each:
//   forward   scores  = baddbmm(Q, K^T)               batched GEMM [s_q x d] x [d x s_k]
//             probs   = scale-mask-softmax(scores)    one fused kernel: read + write the scores,
//                                                     when FusedScaleMaskSoftmax's kernel is
//                                                     available (16-bit, 16 < s_k <= 4096, s_q, s_k
//                                                     and the batch x heads count multiples of 4);
//                                                     otherwise masked_fill_ then torch softmax:
//                                                     two kernels, each a read and a write
//             probs   = dropout(probs)                torch native_dropout: read, write, and a
//                                                     1-byte bool mask written
//             context = bmm(probs, V)                 batched GEMM [s_q x s_k] x [s_k x d]
//             context.permute(2,0,1,3).contiguous()   a copy of the context: read + write
//   backward  the context copy again (the view of the permuted gradient copies), the two bmm
//             backward products (dP = dO V^T, dV = P^T dO), dropout backward (read the gradient
//             and the mask, write), softmax backward (read the gradient and the probabilities,
//             write; the fused kernel does this in one, the fallback adds masked_fill's backward:
//             read + write), the two products of the scores' backward (dQ = dS K, dK = dS^T Q),
//             each then scaled by baddbmm's alpha = 1/norm_factor in a kernel of its own
//             (tools/autograd/derivatives.yaml, baddbmm: maybe_multiply(grad.bmm(...), alpha)):
//             read + write of dQ and of dK.
// Every memory-bound pass is costed at the device's streaming bandwidth (KernelEfficiency), one
// launch each; the batched GEMMs go through the GEMM model, so the small-K penalty of K = head dim
// applies to QK^T. The batch_per_block condition of the fused kernel is not modelled (for s_k >
// 128 it is 4 problems per block, which the multiple-of-4 condition already covers [inference]).
//
// FlashAttention (Dao et al., arXiv 2205.14135, 2307.08691), causal: one kernel each way, costed
// from the device's measured efficiency table (costmodel/attention_cost.hpp); no score tensors.

#include <string_view>
#include <vector>

#include "strategies/layers/step_writer.hpp"

namespace parasim::strat::detail {

struct UnfusedAttention {
  double problems = 0;  // batch x heads on this rank
  double seq_q = 0;
  double seq_k = 0;
  double head_dim = 0;
  double element_bytes = 2;  // e of the scores and the context
  bool sixteen_bit = true;   // fp16 / bf16 activations (the fused softmax needs them)
  bool dropout = true;
  bool fusion = true;        // the framework fuses the masked softmax (KernelFusions)
};

struct MemoryPass {
  std::string_view kernel;  // "scale-mask-softmax", "dropout", ...
  double bytes = 0;         // HBM bytes read plus written
};

// Whether Megatron's FusedScaleMaskSoftmax uses its fused kernel (is_kernel_available, and the
// fusion not switched off by --no-masked-softmax-fusion).
bool fused_softmax_available(const UnfusedAttention& a);

// The memory-bound passes of the unfused core, in issue order, one kernel each.
std::vector<MemoryPass> unfused_attention_passes(const UnfusedAttention& a, bool backward);

// The attention core of dims `x` into the writer's current block: unfused or FlashAttention.
void attention_core_forward(StepWriter& w, const Dims& x);
void attention_core_backward(StepWriter& w, const Dims& x);

}  // namespace parasim::strat::detail
