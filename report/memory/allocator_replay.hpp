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
// allocation of its category with exactly that size (the builder frees what it allocated), else
// the tail of the largest live one. A delta here is one builder call (sim::MemoryPiece), before
// the workload merges an op's deltas of one category. A step that frees all it allocates is
// replayed twice and the peaks taken over both, so that what the first step leaves cached shapes
// the second (the steady state trainers report after their first iterations).
//
// Granularity (a simplification, docs/result.md#reserved-memory): the ledger allocates a layer's
// stored activations, a backward's transients or a gathered unit as one block each, where a
// trainer allocates a dozen tensors; fragmentation between tensors of one such block is not seen,
// so reserved is a floor of what a run reserves with the same blocks laid out tensor by tensor.

#include <cstdint>
#include <vector>

#include "sim/engine.hpp"
#include "sim/workload.hpp"

namespace parasim::strat {

struct AllocatorReplay {
  double requested_peak_bytes = 0;  // the ledger's peak (with the extra base bytes)
  double allocated_peak_bytes = 0;  // torch.cuda.max_memory_allocated
  double reserved_peak_bytes = 0;   // torch.cuda.max_memory_reserved
  std::int64_t retries = 0;         // memory_stats' num_alloc_retries
  std::int64_t out_of_memory = 0;   // requests that found no room within the capacity
  bool two_steps = false;           // replayed twice (the step frees all it allocates)
  // Bytes the ledger freed beyond what its category held live (0 for a consistent ledger; the
  // tests check it on every shipped scenario).
  std::int64_t unmatched_free_bytes = 0;
  // Frees that met no live allocation of their exact size (the tail of one was freed instead).
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
