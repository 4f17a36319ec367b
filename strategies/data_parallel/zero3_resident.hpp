#pragma once
// parasim::strat::zero3_resident — how much of a layer's ZeRO-3-sharded weights a GPU holds
// gathered while it runs each layer pass, as DeepSpeed's parameter coordinator keeps them
// (framework.hpp, Zero3Gather::kPerModule). FSDP-style per-layer gathering is not modelled here:
// its unit and the next one (prefetch) are resident, which the builder's ledger gets from the
// gathers themselves.
//
// Source: DeepSpeed runtime/zero/partitioned_param_coordinator.py at v0.14.4 (d254d75e;
// `fetch_sub_module`, `__params_to_release`, `release_sub_module`) and runtime/zero/config.py
// (the defaults). One micro-batch's trace of submodule uses is replayed:
//   forward: every layer's modules in order; backward: layers in reverse, each a recompute of
//   its modules in order when the layer is checkpointed, then its modules in reverse order.
// At each use of module m: m is fetched if not available; then up to
//   min(max_live_parameters - available, prefetch_bucket_size)
// elements of the modules next in the trace that are not available are prefetched (a module is
// taken whole while the running total is below the limit, so the last one may overshoot it;
// modules found available are passed over but marked as used later); then m is released unless
// it is used again within the next `max_reuse_distance` elements of the trace, or the prefetch
// passed over a later use of it. The coordinator's trace restarts every micro-batch, so nothing
// stays gathered across micro-batches.
//
// Units: elements of full (gathered) tensors per tensor-parallel rank; multiply by the training
// dtype's bytes, and by (dp - 1) / dp for what the gathering adds to the rank's own shard.
// Invariants: every resident figure is at least the largest module used in that pass and at most
// the sum of every module of the trace.
// Not modelled: the embedding and head (the builder keeps them sharded and gathers nothing for
// them, so the trace leaves them out and its reuse distances are shorter by their elements:
// 7.7e7 per pass for GPT-3 175B at tp 8), parameters that several modules share, and the
// persistent tensors (kept whole on every rank; the builder adds them to the weights).

#include <vector>

#include "strategies/framework/framework.hpp"

namespace parasim::strat {

struct Zero3Resident {
  std::vector<double> forward;   // per layer of the stage: the most gathered during its forward
  std::vector<double> backward;  // per layer: the most gathered during its backward (with its
                                 // recompute when checkpointed)
  // What stays gathered after the pass, until the next one starts (modules kept for their
  // reuse or prefetched): held through what runs between passes (the head, the turn from the
  // forward to the backward). Never more than the pass's own figure.
  std::vector<double> forward_end;
  std::vector<double> backward_end;
};

// `units`: elements gathered per module of one layer, in forward order (zero3_gather_units.hpp
// with Zero3Gather::kPerModule); `layers` >= 1 of them in the stage; `checkpointed`: a full
// recompute runs each layer's forward again before its backward. Throws std::invalid_argument
// when layers < 1, units is empty or a unit is not positive.
Zero3Resident zero3_resident_elements(const std::vector<double>& units, int layers,
                                      bool checkpointed, const Zero3Gathering& z3);

}  // namespace parasim::strat
