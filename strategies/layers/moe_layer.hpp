#pragma once
// Internal to strategies/layers: the MLP block of a mixture-of-experts layer as Megatron-core
// 0.19.2 runs it (core/transformer/moe/: moe_layer.py, router.py, token_dispatcher.py,
// experts.py), dropless, forward and backward, for one micro-batch on one rank. Not a public
// header; transformer_layer_program(..., LayerKind::kMoe) calls it.
//
// T = this rank's tokens (b s / cp, / tp with sequence parallelism: Megatron requires SP with
// tp > 1), h hidden, E experts, k top-k, n = E / ep local experts, F an expert's width, etp its
// split, e bytes per activation, R the busiest EP rank's load over the mean (expert_load.hpp).
// Forward (alltoall dispatcher): the norm; shared experts (a dense MLP of S x F_s on the tp
// group, before the routing); the router GEMM [T x h] x [h x E]; score (softmax or sigmoid),
// top-k and the probabilities' scatter; the load-balancing loss's second score pass and sum (aux
// losses) and its all-reduce of E counts over tp; tokens per expert and their all-gather over
// ep, then a host sync (the counts go to the host for the all-to-all's splits: Megatron's
// cuda_sync_point "before_ep_alltoall"); the permutation (k copies of each token, in expert
// order); the all-to-all over ep of T k h e bytes (x R: the busiest rank receives R times its
// share, and the collective ends with it) and of the probabilities; with etp > 1 an all-gather
// over etp; the chunk sort by expert (n > 1); the grouped GEMMs fc1 [m x h] x [h x 2F/etp] and
// fc2 [m x F/etp] x [F/etp x h] over n experts of m = etp T k R / n tokens each (one kernel,
// batch n: the GEMM model's efficiency falls as m shrinks); SwiGLU times the probabilities; the
// unsort; with etp > 1 a reduce-scatter; the all-to-all back; the un-permutation (scatter-add of
// the k copies); the shared experts' output added; the residual add. The allgather dispatcher
// gathers every token with its routing map and probabilities over etp x ep instead, keeps its
// experts' tokens, and reduce-scatters the outputs back. The backward mirrors it: the
// collectives' transposes, both GEMMs of each expert GEMM (the weight gradients into
// zero-bubble's W when split off), the router's.
// A capacity factor (Megatron's --moe-expert-capacity-factor) caps each expert at that multiple
// of its fair share: the router drops the rest before the dispatch, so R is capped (the busiest
// rank receives at most its local experts' capacity) and the model FLOPs count the kept share
// (expert_load.hpp's expected drop).
// With parallel.moe_shared_expert_overlap (Megatron's --moe-shared-expert-overlap, alltoall or
// flex) the forward's shared experts run after the permutation, on the compute stream while the dispatch
// all-to-all is on the ep stream, and the experts wait for both (a DAG of the layer's steps).
// The flex dispatcher (DeepEP's normal kernels through Megatron's _DeepepManager, token_
// dispatcher.py and fused_a2a.py) over the etp x ep group: the router's probabilities to top-k
// indices and weights, DeepEP's layout kernel (tokens per rank, per node, per expert and the
// "is token in rank" map), the notify and the host's wait for the received counts (a sync), the
// dispatch (hidden states, k int64 indices and k fp32 weights per token, once per target rank:
// cost::TokenExchange); the received tokens turned into a multi-hot map of the local experts and
// permuted into expert order; the experts; the un-permutation; the combine (hidden states back,
// summed per token). Backward: the combine's transpose is a dispatch with the cached handle (no
// layout, no sync), the dispatch's a combine (with the weights' gradients).
// The shared-expert overlap holds in the backward too: Megatron runs the shared experts on a
// stream of their own (shared_experts.py), so their backward runs under the combine's backward
// exchange and the experts' backward waits for both.
// Not modelled: padding to capacity.

#include <vector>

#include "strategies/layers/step_writer.hpp"

namespace parasim::strat::detail {

struct MoeDims {
  double experts = 0, top_k = 0, local_experts = 0;
  double expert_ffn = 0;  // F
  double shared_ffn = 0;  // S x F_s, the shared experts as one MLP; 0 without
  double ep = 1, etp = 1;
  double tokens = 0;       // T: this rank's tokens (sequence-sharded with SP)
  double rank_factor = 1;  // R: the busiest EP rank's received tokens over the mean
  // The mean rank's computed share of its k T token copies: 1 dropless; 1 - the expected
  // dropped fraction with a capacity factor (what the model FLOPs count).
  double kept_share = 1;
  bool sigmoid = false;
  bool aux_loss = false;  // aux_loss or seq_aux_loss: a second score pass and its all-reduce
  bool expert_bias = false;
  bool allgather = false;  // the allgather dispatcher
  bool flex = false;       // the flex dispatcher (DeepEP)
  bool shared_overlap = false;  // shared experts under the dispatch (alltoall or flex, forward)
  // Megatron's --recompute-modules (selective): moe_act, the routed experts' activation output
  // discarded and rerun before fc2's backward; shared_experts, the shared experts checkpointed
  // (not with shared_overlap: moe_layer.py recomputes them only when not overlapped).
  bool recompute_act = false;
  bool recompute_shared = false;
  // moe: the whole MoE layer checkpointed (moe_layer.py, moe_layer_recompute): its input kept,
  // its forward (moe_layer_forward) rerun when its backward starts.
  bool recompute_layer = false;
  // flex: the distinct tokens the busiest rank receives, etp ep hit(E / ep) T R
  // (cost::token_traffic), and the exchange's description without its payload.
  double received = 0;
  cost::TokenExchange exchange;
  // Tokens the busiest rank computes, over its etp group: etp T k R.
  double computed() const { return etp * tokens * top_k * rank_factor; }
};

MoeDims moe_dims_of(const Scenario& sc);

// The MoE block after attention: appended to `out`.
void moe_block_forward(StepWriter& w, const Dims& x, const MoeDims& m, std::vector<LayerStep>& out);
// Its MoE layer alone (Megatron's MoELayer.forward: shared experts, router, dispatch, experts,
// combine), without the pre-MLP norm and the residual add: what the "moe" module reruns.
void moe_layer_forward(StepWriter& w, const Dims& x, const MoeDims& m, std::vector<LayerStep>& out);
void moe_block_backward(StepWriter& w, const Dims& x, const MoeDims& m,
                        std::vector<LayerStep>& out);
// Activation bytes the MoE block keeps for its backward on the busiest rank (the shared experts',
// the router's and the routed experts' inputs and intermediates), beyond the attention's and the
// pre-MLP norm's input.
double moe_block_activation_bytes(const Dims& x, const MoeDims& m);

}  // namespace parasim::strat::detail
