#pragma once
// parasim::cost::CachingAllocator — PyTorch's CUDA caching allocator
// (c10/cuda/CUDACachingAllocator.cpp), replayed over a step's allocations so that a run's
// *reserved* memory (the segments the allocator holds from cudaMalloc, what trainers print as
// "max reserved" and what runs out first) comes out beside its *allocated* memory (the blocks
// handed to tensors) and its *requested* memory (the bytes asked for, parasim's ledger).
//
// The rules, with the defaults of PYTORCH_CUDA_ALLOC_CONF (no roundup_power2_divisions, no
// max_split_size_mb, no garbage_collection_threshold):
// - a request is rounded up to a multiple of 512 B (kMinBlockSize; round_size);
// - a rounded request of at most 1 MiB (kSmallSize) comes from the small pool, others from the
//   large pool; each pool is kept per CUDA stream: a block freed on one stream is reused only by
//   requests on that stream (get_free_block searches (stream, size) order);
// - best fit: the smallest cached free block of the stream's pool that holds the request;
// - a block larger than the request is split when the rest is at least 512 B (small pool) or
//   more than 1 MiB (large pool); otherwise the whole block is handed out, so `allocated`
//   counts up to 1 MiB of slack per large block (should_split);
// - with no fitting block, a new segment is cudaMalloc'ed: 2 MiB (kSmallBuffer) for a small
//   request, 20 MiB (kLargeBuffer) for a request under 10 MiB (kMinLargeAlloc), else the request
//   rounded up to 2 MiB (kRoundLarge) (get_allocation_size);
// - a freed block merges with free neighbours of its segment; segments are never returned to the
//   device, except when a cudaMalloc would exceed the device's capacity: then every segment with
//   no block in use is freed and the cudaMalloc retried (release_cached_blocks; a "retry", as
//   memory_stats' num_alloc_retries counts them); a second failure is an out-of-memory error.
// expandable_segments:True (Note [Expandable Segments]) instead keeps one growing virtual segment
// per (stream, pool), mapped in pages of 2 MiB (small pool) or 20 MiB (large pool): a request
// that fits no free block maps only the pages it lacks at the segment's end (taking a free block
// at the end into the request), and any rest of at least 512 B is split off in both pools. Best
// fit passes over the segment's end block when another free block holds the request (its
// expandable size, the end block's with the unmapped space after it, is the larger:
// get_free_block). On the out-of-memory path every whole page inside a free block is unmapped
// (release_cached_blocks -> unmap_block); the segment's end shrinks, a hole inside is mapped again
// when its block is handed out. Simplification: a hole is refilled by the block around it, not
// by a new request placed in the lowest hole (find_expandable_block).
// Ties between free blocks of one size go to the earlier segment, then the lower offset: address
// order, approximated.
// Sources: pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (round_size, get_pool,
// get_allocation_size, get_free_block, should_split, try_merge_blocks, release_cached_blocks,
// ExpandableSegment), commit 001074d2 (2024, ~v2.5); the rules are unchanged in later releases
// except for options left at their defaults here.
//
// Units: bytes. Invariants: requested <= allocated <= reserved at every moment; a stream id is any
// number the caller uses consistently. Deterministic: the same calls give the same figures.

#include <cstdint>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace parasim::cost {

inline constexpr std::int64_t kAllocatorMinBlock = 512;            // kMinBlockSize
inline constexpr std::int64_t kAllocatorSmallSize = 1 << 20;       // kSmallSize, 1 MiB
inline constexpr std::int64_t kAllocatorSmallBuffer = 2 << 20;     // kSmallBuffer, 2 MiB
inline constexpr std::int64_t kAllocatorLargeBuffer = 20 << 20;    // kLargeBuffer, 20 MiB
inline constexpr std::int64_t kAllocatorMinLargeAlloc = 10 << 20;  // kMinLargeAlloc, 10 MiB
inline constexpr std::int64_t kAllocatorRoundLarge = 2 << 20;      // kRoundLarge, 2 MiB

// round_size: the block size a request of `bytes` (> 0) asks for.
std::int64_t allocator_round_size(std::int64_t bytes);
// get_allocation_size: the cudaMalloc size of a new segment for a rounded request.
std::int64_t allocator_segment_size(std::int64_t rounded);
// should_split: whether a block of `block` bytes handed to a `rounded` request is split.
bool allocator_should_split(std::int64_t block, std::int64_t rounded, bool small_pool,
                            bool expandable);

struct AllocatorStats {
  std::int64_t requested = 0;  // bytes asked for by live allocations
  std::int64_t allocated = 0;  // their blocks' sizes
  std::int64_t reserved = 0;   // segments held (expandable: pages mapped)
  std::int64_t peak_requested = 0;
  std::int64_t peak_allocated = 0;
  std::int64_t peak_reserved = 0;
  std::int64_t segments = 0;       // cudaMalloc calls (expandable: page mappings)
  std::int64_t retries = 0;        // cache releases before a retried cudaMalloc (met or not)
  std::int64_t out_of_memory = 0;  // requests that could not be met within the capacity (0 or 1)
  std::int64_t first_out_of_memory_bytes = 0;  // the first such request's size; 0: none
};

// The largest request the model takes (1 PiB): sums of live requests stay far inside int64.
inline constexpr std::int64_t kAllocatorMaxRequest = std::int64_t{1} << 50;

class CachingAllocator {
 public:
  // `capacity_bytes`: what the allocator may hold (the device's memory less what lives outside
  // it); <= 0: unlimited (segments are never released). After the first request that finds no
  // room the capacity is lifted: the run has failed there, and the figures go on to what it
  // would need (which also keeps a replay of a layout far over its memory linear in time).
  explicit CachingAllocator(bool expandable_segments = false, std::int64_t capacity_bytes = 0);

  // A tensor of `bytes` (0 < bytes <= kAllocatorMaxRequest, else std::invalid_argument) on
  // `stream`; returns its handle. Out of memory is counted in the stats and the request is still
  // served (so that a replay may go on).
  std::uint32_t allocate(std::int64_t bytes, std::uint32_t stream);
  // Frees the whole tensor.
  void free(std::uint32_t handle);
  // Frees the last `bytes` of a live tensor (< its request), as if they were a second tensor
  // allocated right after it: the tail becomes a free block where should_split allows it, else
  // it stays in the block as slack.
  void free_tail(std::uint32_t handle, std::int64_t bytes);
  std::int64_t requested_of(std::uint32_t handle) const;

  const AllocatorStats& stats() const { return stats_; }
  // Starts new peaks from the current figures (torch.cuda.reset_peak_memory_stats).
  void reset_peaks();

 private:
  static constexpr std::uint32_t kNoBlock = 0xFFFFFFFFu;
  struct Block {
    std::uint32_t segment = 0;
    std::int64_t address = 0;  // offset in its segment
    std::int64_t size = 0;
    std::int64_t requested = 0;  // 0: free
    std::int64_t unmapped = 0;   // expandable, free: bytes of its whole pages unmapped
    bool free = true;
    std::uint32_t prev = kNoBlock;  // neighbours in the segment, by address
    std::uint32_t next = kNoBlock;
  };
  struct Segment {
    std::uint32_t stream = 0;
    bool small = false;
    std::int64_t size = 0;  // bytes held (expandable: its extent, mapped or not)
    bool released = false;
    std::uint32_t last = kNoBlock;  // the block at its end
  };
  // Free blocks per (stream, pool) key, ordered by (size, segment, address): best fit.
  using FreeKey = std::tuple<std::int64_t, std::uint32_t, std::int64_t, std::uint32_t>;

  std::uint64_t pool_key(std::uint32_t stream, bool small) const {
    return (static_cast<std::uint64_t>(stream) << 1) | (small ? 1u : 0u);
  }
  std::int64_t page_of(const Segment& s) const {
    return s.small ? kAllocatorSmallBuffer : kAllocatorLargeBuffer;
  }
  void insert_free(std::uint32_t b);
  void erase_free(std::uint32_t b);
  std::uint32_t new_block(std::uint32_t segment, std::int64_t address, std::int64_t size);
  // Cuts block `b` at `size`: the bytes after it become a new block linked after it (free, not
  // in a free set); returns that block.
  std::uint32_t split_block(std::uint32_t b, std::int64_t size);
  std::uint32_t find_free(std::uint32_t stream, bool small, std::int64_t rounded) const;
  std::uint32_t grow(std::uint32_t stream, bool small, std::int64_t rounded);
  bool fits_capacity(std::int64_t more) const;
  // Makes room for `more` bytes more: when they do not fit, the cache is released and a retry
  // counted; when they still do not, out of memory is counted (with `request`, the request).
  void make_room(std::int64_t more, std::int64_t request);
  void release_cached();
  void release_expandable(Segment& seg);
  void hand_out(std::uint32_t b, std::int64_t rounded, std::int64_t bytes, bool small);
  void free_block(std::uint32_t b);
  void note_peaks();

  bool expandable_;
  std::int64_t capacity_;
  std::vector<Block> blocks_;
  std::vector<Segment> segments_;
  std::vector<std::uint32_t> live_segments_;  // segments not released (not expandable)
  std::map<std::uint64_t, std::set<FreeKey>> free_;
  std::map<std::uint64_t, std::uint32_t> expandable_segment_;  // (stream, pool) -> segment
  AllocatorStats stats_;
};

}  // namespace parasim::cost
