#pragma once
// Internal to strategies/layers: the attention core of one layer under context parallelism
// (cp > 1), forward and backward, by ParallelSpec::cp_comm. Not a public header.
// docs/context-parallel.md explains each mode and the source of every figure.
//
// Notation (one rank): B micro-batch, s = S / cp its tokens (Dims::s), a and kv the model's query
// and K/V heads, d the head width, t the TP ranks, e bytes per activation element.
//
// ring (Liu et al. 2023, arXiv 2310.01889; Megatron's --cp-comm-type p2p, TE's
//   AttnFuncWithCPAndKVP2P): cp blocks of (s x s) causal attention (zigzag-balanced), the next
//   block's K/V (2 B s kv d / t x e bytes) sent to the ring's next rank while one computes: cp - 1
//   send-recvs forward; backward the K/V again and each block's dK/dV, 2 (cp - 1) send-recvs.
// allgather (TE's AttnFuncWithCPAndKVAllGather): the cp K/V blocks all-gathered first;
//   backward the all-gather again and a reduce-scatter of dK/dV.
// a2a (DeepSpeed-Ulysses, Jacobs et al. 2023, arXiv 2309.14509, sec. 3; TE d0067d0d,
//   transformer_engine/pytorch/attention/dot_product_attention/context_parallel.py,
//   AttnFuncWithCPAndQKVOA2A (line 4170) with flash_attn_a2a_communicate (line 387)): Q, K and V
//   each by its own all_to_all_single over the cp group (heads scattered, sequence gathered),
//   then one causal attention over the whole sequence S with a / (t cp) query and kv / (t cp)
//   K/V heads, then the output by one all-to-all back (sequence scattered, heads gathered).
//   Backward mirrors it: dO by one all-to-all before the attention's backward, dQ, dK, dV by
//   three after. Each all-to-all's message (the buffer of one rank) is its tensor
//   [s, B, heads / t, d]: Q and O B s (a / t) d e bytes, K and V B s (kv / t) d e bytes; NCCL
//   keeps 1/cp of it local, so a rank sends (cp - 1) / cp of it. Per rank per layer:
//     forward  (cp - 1) / cp x 2 B s (a + kv) d e / t  bytes sent  (Q, K, V, O)
//     backward (cp - 1) / cp x 2 B s (a + kv) d e / t  bytes sent  (dO, dQ, dK, dV)
//   with s = S / cp: 2 B S (a + kv) d e (cp - 1) / (cp^2 t) each way.
//   Around each all-to-all'd tensor TE copies it twice (context_parallel.py:473 the
//   movedim(...).contiguous() of the send side, 271-295 the index_select that restores the
//   zigzag chunk order on the other): two memory passes of 2 x its bytes each. Attention runs
//   on whole sequences, so every rank does the same causal work: no load balancing is needed
//   (the index_select only undoes the zigzag split the rest of the layer keeps).
//   The all-to-alls run on the cp stream and the compute waits for them: TE waits on each
//   request before the attention (context_parallel.py:431, 504, 535); DeepSpeed's optional
//   sp_stream overlap (deepspeed/sequence/layer.py:321-337) is not modelled.
// a2a+p2p (Megatron-core --cp-comm-type a2a+p2p with --hierarchical-context-parallel-sizes
//   [n_a, n_p], n_a n_p = cp; TE's AttnFuncWithCPAndKVP2P with cp_group = [a2a group, p2p group],
//   context_parallel.py:1407-1419, 1492, 2034): the a2a above over the n_a consecutive
//   cp ranks (Megatron-LM d98e8a64, megatron/core/parallel_state.py:378 create_hierarchical_groups:
//   level 0 consecutive, level 1 strided by n_a), then ring attention over the n_p ranks of
//   stride n_a with n_a s tokens and a / (t n_a), kv / (t n_a) heads (its K/V block is the same
//   2 B s kv d / t x e bytes; n_p - 1 send-recvs forward), then the output all-to-all over the
//   n_a ranks; backward dO all-to-all, the ring's backward, dQ, dK, dV all-to-alls.

#include <vector>

#include "strategies/layers/step_writer.hpp"

namespace parasim::strat::detail {

// Forward: closes the open block (the QKV projection and what precedes it) and appends the
// attention core's steps; the last step is the one the output projection waits for. Compute
// the caller writes afterwards goes after it.
void cp_attention_forward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out);

// Backward: closes the open block (the output projection's backward) and appends the core's
// backward; the caller's next block (the QKV backward) goes after its last step.
void cp_attention_backward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out);

}  // namespace parasim::strat::detail
