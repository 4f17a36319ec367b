#pragma once
// parasim::strat::zero3_gather_units — the all-gathers ZeRO-3 issues to bring one transformer
// layer's sharded weights to a tensor-parallel rank, before the layer's forward and again before
// its backward (every micro-batch), as the scenario's framework issues them
// (FrameworkSpec::zero3, framework.hpp). The workload builder emits one collective per unit and
// the planner's screen costs the same units, so both see the same calls.
//
// Per layer (FSDP units, parasim's default): one unit, the layer's parameters on this TP rank
// (layer_params_per_tp_rank).
// Per module (DeepSpeed ZeRO-3): one unit per submodule of Megatron's layer layout
// (layer_module_tensors_per_tp_rank: input norm, QKV, output projection, post-attention norm,
// fc1, fc2) holding the module's parameter tensors larger than the persistence threshold; tensors at or below it stay whole on every rank and are
// not gathered, and a module left with nothing to gather issues no call.
//
// Units: elements per TP rank (multiply by the training dtype's bytes). Invariant: with a
// threshold of 0 the per-module units add up to layer_params_per_tp_rank exactly.

#include <vector>

#include "sim/time.hpp"
#include "strategies/framework/framework.hpp"
#include "strategies/input/model.hpp"

namespace parasim::strat {

// Elements gathered by each call, in the order the forward uses them.
std::vector<double> zero3_gather_units(const ModelSpec& model, int tp, const Zero3Gathering& z3);

// Elements of one layer's tensors at or below the persistence threshold on one TP rank: kept
// whole on every data-parallel rank (DeepSpeed's ds_persist tensors, partition_parameters.py),
// so a rank holds them in full instead of a 1/dp shard. 0 with per-layer gathering or a
// threshold of 0. Invariant: zero3_persistent_elements + the sum of zero3_gather_units equals
// layer_params_per_tp_rank with per-module gathering.
double zero3_persistent_elements(const ModelSpec& model, int tp, const Zero3Gathering& z3);

// The reduce-scatters of one layer's gradients, elements per TP rank each: one for the layer;
// with Zero3Gathering::reduce_per_unit (DeepSpeed 2021: one per parameter) one per gathered unit
// and one for the persistent tensors when there are any: as many elements as the gathers and the
// persistent tensors (layer_params_per_tp_rank for the layers layer_module_tensors_per_tp_rank
// lays out exactly). Emitted by the builder, costed by the planner's screen.
std::vector<double> zero3_reduce_calls(const ModelSpec& model, int tp, const Zero3Gathering& z3);

// Host time of one blocking fetch (Zero3Gathering::blocking_fetch, DeepSpeed 2021): the
// torch.cuda.synchronize() before it, one host-only op per rank of the data-parallel group (the
// list of views), the collective call, and the two syncs that wait for it; what the builder's
// host stream spends on it besides the wait, and what the screen adds per gather.
sim::Time zero3_blocking_fetch_host(const FrameworkSpec& framework, int group_ranks);

// Gathers of one layer per micro-batch: before the forward, and before the backward (twice
// under full recompute with Zero3Gathering::regather_for_recompute: the rerun, then the
// backward).
int zero3_backward_gathers(const Zero3Gathering& z3, bool full_recompute);

// ZeRO-Infinity's parameter offload (DeepSpeed offload_param device cpu): the rank's 16-bit
// partition of a unit lives in pinned host memory and each gather first copies it to the GPU
// (partition_parameters.py, all_gather_coalesced: `p.ds_tensor.to(current_device)` into the
// all-gather's input, DeepSpeed 0.19.6 @edaa722 L1330-1333): `elements` / `dp` x
// `param_bytes` bytes over the host link per gather.
double zero3_partition_h2d_bytes(double elements, int dp, double param_bytes);

}  // namespace parasim::strat
