#pragma once
// Internal to strategies/layers: multi-head latent attention (DeepSeek-V2, arXiv 2405.04434
// sec. 2.1; DeepSeek-V3, arXiv 2412.19437 sec. 2.1.1) as megatron-core 0.19.2 runs it
// (core/transformer/multi_latent_attention.py, MLASelfAttention), forward and backward, for one
// micro-batch on one tensor-parallel rank. Not a public header.
//
// T tokens (gathered over tp with sequence parallelism), h hidden, a heads, q_r / kv_r the
// latent widths, d_n / d_r / d_v the no-position, RoPE and value head widths, t = tp:
//   the input norm; the query's down projection [T x h] x [h x q_r] (duplicated on every tp rank)
//   and its norm, the up projection [T x q_r] x [q_r x a (d_n + d_r) / t]; the key-value down
//   projection [T x h] x [h x (kv_r + d_r)] (duplicated) and its norm, the up projection
//   [T x kv_r] x [kv_r x a (d_n + d_v) / t]; RoPE on the queries' and the shared key's d_r parts
//   and the keys' and queries' concatenation (memory passes); the attention core with a head
//   width of (d_n + d_r + d_v) / 2 (its two products, Q K^T over d_n + d_r and P V over d_v, have
//   exactly the FLOPs of two products over that mean width); the output projection
//   [T x a d_v / t] x [a d_v / t x h]. Without q_r the query is one projection
//   [T x h] x [h x a (d_n + d_r) / t].
// Simplifications: the duplicated projections' weight gradients are not all-reduced over tp;
// the core's FlashAttention time is read at the mean head width.

#include <vector>

#include "strategies/layers/step_writer.hpp"

namespace parasim::strat::detail {

// Dims for MLA's core: a heads of K and V (no grouping) at the mean head width.
Dims mla_core_dims(const Dims& x, const MlaSpec& mla);
void mla_attention_forward(StepWriter& w, const Dims& x, const MlaSpec& mla,
                           std::vector<LayerStep>& out);
// `recompute_up`: Megatron's mla_up_proj module, the up projections, RoPE and joins rerun first.
void mla_attention_backward(StepWriter& w, const Dims& x, const MlaSpec& mla, bool recompute_core,
                            bool recompute_up, std::vector<LayerStep>& out);

}  // namespace parasim::strat::detail
