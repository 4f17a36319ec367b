#pragma once
// parasim::strat TSP: tensor and sequence parallelism folded onto one axis of D GPUs (Zyphra,
// arXiv 2604.26294). Every rank holds 1/D of every weight and 1/D of the
// sequence (T = b s / D tokens).
//
// Forward, attention: D rounds; in round r the owner broadcasts its packed Wq, Wk, Wv, Wo shard
// (h (h + 2 kv) / D + h^2 / D elements) on the weight stream, every rank computes Q, K, V of head
// shard r for its tokens, K/V of that shard are all-gathered along the sequence (tp stream), the
// rank's queries attend causally to all keys (FlashAttention, a/D heads, half the FLOPs), and the
// output accumulates locally through Wo's shard: no all-reduce. Broadcasts run ahead of the
// compute (round r+1's weights arrive while round r computes). Head bucketing
// (parallel.tsp_kv_buckets = B): a round gathers and attends its K/V in B buckets of a/(D B) heads;
// forward, double-buffered (bucket k+1 arrives while k is attended, bucket k's gather waits for
// k-2's attention); backward, one bucket at a time (its gather waits for the previous bucket's
// dK/dV reduce-scatter). Two buckets' K/V are held either way (backward: K/V and dK/dV).
// Forward, gated MLP: D ring steps; at step j a rank computes its tokens through the shard it holds
// while sending that shard (3 h f / D elements) to its neighbour for step j+1.
// Per rank per layer forward, bf16, k = (D-1)/D: weights 8h^2 k + 24 h^2 k (f = 4h) and K/V
// 4 B S h k: 4 B S h k + 32 h^2 k bytes.
// Full recompute: only the layer input (2 T h bytes) is kept and the backward first runs the
// forward again, transfers included. Backward: weights fetched again the same way, weight-gradient shards reduced to their owners
// (attention, after each round) or passed along the ring (MLP), dK/dV reduce-scattered per round,
// FlashAttention's backward and every GEMM's two gradients.

#include "costmodel/cost_model.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {

LayerProgram tsp_layer_program(const Scenario& scenario, const cost::CostModel& costs);

}  // namespace parasim::strat
