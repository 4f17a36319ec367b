// PyTorch's CUDA caching allocator modes (training.allocator): the model in
// costmodel/caching_allocator.hpp, replayed over a step's memory ledger by
// report/memory/allocator_replay.hpp; docs/result.md#reserved-memory.
#include "strategies/registry/kind_lists.hpp"

namespace parasim::strat {
namespace {

Entry entry(AllocatorKind id, const std::string& description) {
  Entry e;
  e.kind = EntryKind::kAllocator;
  e.name = e.value = allocator_name(id);
  e.description = description;
  e.paper =
      "PyTorch 2019 (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp; expandable "
      "segments: its Note [Expandable Segments], 2023)";
  e.builder = "allocator_replay.cpp (the ledger replayed through caching_allocator.cpp)";
  e.traits = AllocatorTraits{.id = id};
  return e;
}

}  // namespace

std::vector<Entry> allocator_entries() {
  return {entry(AllocatorKind::kCaching,
                "PyTorch's default: requests rounded to 512 B, segments of 2 MiB (small), 20 MiB "
                "(under 10 MiB) or the request rounded to 2 MiB, best fit per stream, never "
                "returned until a cudaMalloc would not fit"),
          entry(AllocatorKind::kExpandableSegments,
                "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: one growing segment per stream "
                "and pool, mapped in 2 MiB / 20 MiB pages, so no unusable segment tails "
                "(torchtitan's launcher sets it)")};
}

}  // namespace parasim::strat
