#pragma once
// parasim::strat allocator replay — a simulated step's memory ledger replayed through PyTorch's
// caching allocator (costmodel/caching_allocator.hpp), so that each device's *reserved* memory
// (segments held, what runs out first and what trainers print as max reserved) and *allocated*
// memory (blocks handed to tensors) come out beside the ledger's requested bytes.
//
// What is replayed, per simulated device, in the engine's order (sim::SimResult::memory_log):
// first the base memory (weights, gradients, optimizer state, stashed weight versions), one
// allocation per category, then every op's memory delta: a positive delta is one allocation on
// the op's stream (a collective's buffers on its communication stream, everything else on the
// compute stream, where the trainer's thread allocates), a negative delta frees the live
// allocation of its category with the same tag (the tensor the builder names: a micro-batch's
// layer's stored activations, its logits, ...) and size, else the base allocation of that size,
// else the tail of the largest live one (DeepSpeed's per-module ZeRO-3 residency, whose ledger
// holds net changes). Same tag and size: of a named tensor the most recent, of an unnamed buffer
// the oldest. A delta here is one builder call (sim::MemoryPiece), before the workload merges an
// op's deltas of one category; the pieces of one op's start or end are replayed in call order. A
// step that frees all it allocates is replayed twice and the peaks taken over both, so that what
// the first step leaves cached shapes the second (the steady state trainers report after their
// first iterations). Past the first request that finds no room within the capacity, the replay goes
// on without one (the figures are then what the run would need).
//
// Granularity (a simplification, docs/result.md#reserved-memory): the ledger allocates a layer's
// stored activations, a backward's transients or a gathered unit as one block each, where a
// trainer allocates a dozen tensors. The figure is neither a floor nor a ceiling: fragmentation
// among one block's tensors is not seen, and one large block can need a contiguous room that its
// smaller tensors would have found in holes.

#include <cstdint>
#include <vector>

#include "sim/engine.hpp"
#include "sim/workload.hpp"

namespace parasim::strat {

struct AllocatorReplay {
  double requested_peak_bytes = 0;  // the ledger's peak (with the extra base bytes)
  double allocated_peak_bytes = 0;  // torch.cuda.max_memory_allocated
  double reserved_peak_bytes = 0;   // torch.cuda.max_memory_reserved
  // memory_stats' num_alloc_retries, per step (the second replay's when there was one)
  std::int64_t retries = 0;
  // 1 when a request found no room within the capacity (the caching allocator would fail
  // there), else 0; and that request's size.
  std::int64_t out_of_memory = 0;
  std::int64_t first_out_of_memory_bytes = 0;
  bool two_steps = false;  // replayed twice (the step frees all it allocates)
  // Bytes the ledger freed beyond what its category held live (0 for a consistent ledger; the
  // tests check it on every shipped scenario).
  std::int64_t unmatched_free_bytes = 0;
  // Frees that met no live allocation of their tag and size (the tail of one was freed instead).
  std::int64_t inexact_frees = 0;
};

struct AllocatorReplayOptions {
  bool expandable_segments = false;
  // Per device: what the allocator may hold (the device's memory less what lives outside the
  // allocator); empty or <= 0: unlimited.
  std::vector<std::int64_t> capacity_bytes;
  // Per device: bytes allocated with the base memory beyond the workload's (stashed weights).
  std::vector<std::int64_t> extra_base_bytes;
};

// One entry per device of `workload`. `result` must come from an engine run with
// EngineOptions::record_memory_log.
std::vector<AllocatorReplay> replay_allocator(const sim::Workload& workload,
                                              const sim::SimResult& result,
                                              const AllocatorReplayOptions& options);

}  // namespace parasim::strat
