#pragma once
// parasim::strat FSDP2 units — what PyTorch's fully_shard (torch 2.15,
// torch/distributed/fsdp/_fully_shard/) shards, gathers and reduces per unit, as torchtitan
// applies it (torchtitan 0.3.0, torchtitan/distributed/fsdp.py, apply_fsdp_to_decoder); shared by
// the workload builder (fsdp2_emission.cpp) and the planner's screen. docs/pytorch-native.md.
//
// Units (apply_fsdp_to_decoder): the token embedding; each transformer block; the final norm with
// the output head; the root module, which holds nothing left once those are wrapped. With tied
// embeddings the embedding, norm and head are one unit (the builder's embedding unit, without
// pipelining; the stages of a pipeline hold their own parts).
//
// Per unit and pass (elements E per TP rank, shard group of S ranks, param dtype p bytes (the
// training precision), reduce dtype r bytes (training.grad_precision, TrainingSpec::
// gradient_bytes: fp32 as torchtitan's mixed_precision_reduce, or the training precision),
// sharded parameters kept in fp32):
//   gather copy-in (all_gather_copy_in_stream; _get_param_all_gather_inputs casts each fp32 shard
//     to p, torch.ops.fsdp.all_gather_copy_in copies it into the all-gather input): E/S x (4+p)
//     + E/S x 2p bytes;
//   all-gather of E x p bytes over S ranks (all_gather_stream);
//   gather copy-out (the current stream; foreach_all_gather_copy_out -> split_with_sizes_copy
//     into the unsharded parameters): E x 2p bytes;
//   reduce copy-in (the current stream; foreach_reduce_scatter_copy_in casts the unsharded
//     gradients into the reduce-scatter input): E x (p + r) bytes;
//   reduce-scatter of E x r bytes over S ranks (reduce_scatter_stream); with HSDP an all-reduce
//     of E/S x r bytes over the replicas (all_reduce_stream);
//   the sharded gradient accumulated (sharded_param.grad += new_sharded_grad, fp32) on every
//     reduction after the step's first: E/S x 12 bytes.
// Memory per GPU: the sharded parameters (fp32), their gradients (fp32) and AdamW's two moments:
// 16 bytes per parameter / S (FSDP2 keeps no 16-bit copy; unsharded parameters exist only while
// a unit is gathered).
//
// Invariants: S >= 1; 1 <= post-forward ranks <= S and divides S.

#include "costmodel/model_state_memory.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::strat {

enum class Fsdp2UnitKind { kEmbedding, kBlock, kHead };

// Ranks a unit's parameters stay sharded over after its forward: S (resharded: the backward
// gathers over the shard group again), 1 (kept whole until the backward) or N (fully_shard's
// integer reshard_after_forward: a 1/N shard kept; the backward gathers over N ranks).
// torchtitan's policy: blocks and the embedding reshard unless pipelining ("default"); the norm
// and head unit (and the tied embedding's) only under "always" (true).
int fsdp2_post_forward_ranks(const Scenario& s, Fsdp2UnitKind kind);

// Whether gradients are reduce-scattered after every micro-batch's backward (true: torchtitan's
// gradient accumulation leaves requires_gradient_sync on) or accumulated unsharded and reduced
// once after the stage's last backward (pipelining: torch.distributed.pipelining's stage turns
// gradient sync and resharding after backward off and finalize_backward reduces at the end,
// stage.py backward_maybe_with_nosync and perform_reduce_grad).
bool fsdp2_reduces_every_micro_batch(const Scenario& s);

// Bytes each of FSDP2's copy kernels moves for a unit of `elements` (read + write).
struct Fsdp2CopyBytes {
  double gather_copy_in = 0;        // on the all-gather copy-in stream
  double gather_copy_out = 0;       // on the compute stream, before the unit runs
  double reduce_copy_in = 0;        // on the compute stream, after the unit's backward
  double grad_accumulate = 0;       // on the reduce stream, reductions after the step's first
  double unsharded_accumulate = 0;  // pipelining: a micro-batch's gradient into the accumulator
};
Fsdp2CopyBytes fsdp2_copy_bytes(const Scenario& s, double elements);
// The copy-in of a gather from the 1/N shard kept after the forward (already in p bytes: no
// cast, FSDPParam's _sharded_post_forward_param_data): E/N x 2p.
double fsdp2_post_forward_copy_in_bytes(const Scenario& s, double elements, int ranks);

// FSDP2's CPUOffloadPolicy (parallel.offload "fsdp2", docs/offload.md): the sharded fp32
// parameters and gradients live in pinned host memory. Per unit, over the GPU's host link:
//   gather_h2d: a gather from the full shard first copies it to the GPU (FSDPParam.
//     all_gather_inputs, `_sharded_param_data.to(device, non_blocking=True)`, _fsdp_param.py
//     L1143-1146, torch 2.15, on the all-gather copy-in stream), E/S x 4 bytes; a gather from
//     the post-forward shard (already on the GPU) copies nothing;
//   reduce_d2h: the reduced shard, in the parameter's dtype (fp32, _cast_and_view_sharded_grads),
//     copied to the host on the post-reduce stream (the reduce-scatter's, or the HSDP
//     all-reduce's) (foreach_reduce, `new_sharded_grad.to("cpu", non_blocking=...)`,
//     _fsdp_collectives.py L779-811), E/S x 4 bytes.
// Both 0 without that offload.
struct Fsdp2HostCopyBytes {
  double gather_h2d = 0;
  double reduce_d2h = 0;
};
Fsdp2HostCopyBytes fsdp2_host_copy_bytes(const Scenario& s, double elements);

// Bytes on the wire: the all-gather's output (E x p; a block's weight matrices in FP8 under
// torchao's float8 all-gather, fp8.param_gather: zero3_gathered_element_bytes), which is also
// what the unsharded unit holds; the reduce-scatter's input (E x r); the HSDP all-reduce's
// message (E/S x r).
double fsdp2_gather_bytes(const Scenario& s, double elements, Fsdp2UnitKind kind);
double fsdp2_reduce_bytes(const Scenario& s, double elements);
double fsdp2_replica_reduce_bytes(const Scenario& s, double elements);

// Model state per GPU for `parameters` (per TP rank and stage) sharded over S ranks.
cost::ModelStateBytes fsdp2_model_state_bytes(double parameters, int shard);

}  // namespace parasim::strat
