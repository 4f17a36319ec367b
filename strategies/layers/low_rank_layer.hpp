#pragma once
// parasim::strat low-rank (bottleneck) transformer layers under BOOST's tensor-parallel placements
// (BOOST, arXiv 2512.12131; Arcana-2236/BOOST).
//
// Per TP rank, T = b*s tokens, h hidden, f ffn, ra/rm attention/MLP ranks, t = tp:
//  vanilla  each pair column-split on r: down [T x d_in] x [d_in x r/t], up [T x r/t] x [r/t x d_out]
//           (reduction dimension r/t), then an all-reduce of [T, d_out]: after Q, K, V, O (h, kv, kv,
//           h), gate and up (f each), down (h): 5h + 2f elements per token when kv = h.
//  btp      residual stream sharded [T, h/t]; each chunk starts at an up-projection (column-
//           parallel, input [T, r] replicated, reduction dimension r) and ends at the next
//           down-projection (row-parallel over d/t, partial [T, r] all-reduced): [T, 3ra] for the
//           grouped QKV, [T, ra] for O, [T, 2rm] for the grouped gate+up, [T, rm] for down: 7r per
//           token at one rank. RMSNorm on the sharded stream needs the global sum of squares: a
//           [T] fp32 all-reduce per norm, or with online RMSNorm the statistic rides in the next
//           all-reduce (4 bytes per token more there, one collective fewer).
//  grouping linears sharing an input are one GEMM (QKV downs, gate+up downs) and one collective;
//           up-projections with different inputs are one batched launch.
//  low-rank checkpointing (btp): only the r-wide chunk boundaries and the layer input are kept;
//           the backward recomputes the layer's compute (no collectives) before its gradients.
// Backward: the mirror of the forward, every GEMM [m x k] x [k x n] giving dX [m x n] x [n x k] and
// dW [k x m] x [m x n], memory-bound kernels moving 1.5x their forward bytes, the attention core
// its four batched GEMMs, every all-reduce its conjugate of the same size.
// Not modelled: the all-gather of the head-sharded attention output that vanilla's O
// down-projection would need (the scheme BOOST describes lists none).

#include "costmodel/cost_model.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {

LayerProgram low_rank_layer_program(const Scenario& scenario, const cost::CostModel& costs);

}  // namespace parasim::strat
