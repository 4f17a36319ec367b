// PyTorch's CUDA caching allocator, its rules in caching_allocator.hpp.
#include "costmodel/caching_allocator.hpp"

#include <algorithm>
#include <stdexcept>

namespace parasim::cost {

std::int64_t allocator_round_size(std::int64_t bytes) {
  if (bytes < kAllocatorMinBlock) return kAllocatorMinBlock;
  return kAllocatorMinBlock * ((bytes + kAllocatorMinBlock - 1) / kAllocatorMinBlock);
}

std::int64_t allocator_segment_size(std::int64_t rounded) {
  if (rounded <= kAllocatorSmallSize) return kAllocatorSmallBuffer;
  if (rounded < kAllocatorMinLargeAlloc) return kAllocatorLargeBuffer;
  return kAllocatorRoundLarge * ((rounded + kAllocatorRoundLarge - 1) / kAllocatorRoundLarge);
}

bool allocator_should_split(std::int64_t block, std::int64_t rounded, bool small_pool,
                            bool expandable) {
  const std::int64_t remaining = block - rounded;
  if (small_pool || expandable) return remaining >= kAllocatorMinBlock;
  return remaining > kAllocatorSmallSize;
}

CachingAllocator::CachingAllocator(bool expandable_segments, std::int64_t capacity_bytes)
    : expandable_(expandable_segments), capacity_(capacity_bytes) {}

void CachingAllocator::insert_free(std::uint32_t b) {
  const Block& k = blocks_[b];
  const Segment& s = segments_[k.segment];
  free_[pool_key(s.stream, s.small)].insert({k.size, k.segment, k.address, b});
}

void CachingAllocator::erase_free(std::uint32_t b) {
  const Block& k = blocks_[b];
  const Segment& s = segments_[k.segment];
  free_[pool_key(s.stream, s.small)].erase({k.size, k.segment, k.address, b});
}

std::uint32_t CachingAllocator::new_block(std::uint32_t segment, std::int64_t address,
                                          std::int64_t size) {
  Block b;
  b.segment = segment;
  b.address = address;
  b.size = size;
  blocks_.push_back(b);
  return static_cast<std::uint32_t>(blocks_.size() - 1);
}

std::uint32_t CachingAllocator::find_free(std::uint32_t stream, bool small,
                                          std::int64_t rounded) const {
  const auto pool = free_.find(pool_key(stream, small));
  if (pool == free_.end()) return kNoBlock;
  const auto it = pool->second.lower_bound({rounded, 0, 0, 0});
  return it == pool->second.end() ? kNoBlock : std::get<3>(*it);
}

bool CachingAllocator::fits_capacity(std::int64_t more) const {
  return capacity_ <= 0 || stats_.reserved + more <= capacity_;
}

// release_cached_blocks: every segment with no block in use goes back to the device; with
// expandable segments, the whole pages of a free block at a segment's end are unmapped.
void CachingAllocator::release_cached() {
  for (std::uint32_t s = 0; s < segments_.size(); ++s) {
    Segment& seg = segments_[s];
    if (seg.released || seg.last == kNoBlock) continue;
    const std::uint32_t last = seg.last;
    if (!blocks_[last].free) continue;
    if (!expandable_) {
      if (blocks_[last].prev != kNoBlock) continue;  // the segment holds more than this block
      erase_free(last);
      stats_.reserved -= seg.size;
      seg.released = true;
      seg.last = kNoBlock;
      continue;
    }
    const std::int64_t page = seg.small ? kAllocatorSmallBuffer : kAllocatorLargeBuffer;
    Block& b = blocks_[last];
    const std::int64_t keep_end = page * ((b.address + page - 1) / page);
    const std::int64_t unmapped = seg.size - keep_end;
    if (unmapped <= 0) continue;
    erase_free(last);
    seg.size = keep_end;
    stats_.reserved -= unmapped;
    b.size -= unmapped;
    if (b.size > 0) {
      insert_free(last);
    } else {
      seg.last = b.prev;
      if (b.prev != kNoBlock) blocks_[b.prev].next = kNoBlock;
    }
  }
}

// A new segment (or, expandable, more pages at the segment's end) for a request that fits no
// cached block; returns a free block that holds it.
std::uint32_t CachingAllocator::grow(std::uint32_t stream, bool small, std::int64_t rounded) {
  std::uint32_t seg_id = kNoBlock;
  std::int64_t more = 0;
  std::int64_t tail_free = 0;
  if (expandable_) {
    const std::uint64_t key = pool_key(stream, small);
    auto it = expandable_segment_.find(key);
    if (it == expandable_segment_.end()) {
      Segment s;
      s.stream = stream;
      s.small = small;
      segments_.push_back(s);
      it = expandable_segment_.emplace(key, static_cast<std::uint32_t>(segments_.size() - 1)).first;
    }
    seg_id = it->second;
    const Segment& seg = segments_[seg_id];
    if (seg.last != kNoBlock && blocks_[seg.last].free) tail_free = blocks_[seg.last].size;
    const std::int64_t page = small ? kAllocatorSmallBuffer : kAllocatorLargeBuffer;
    more = page * ((rounded - tail_free + page - 1) / page);
  } else {
    more = allocator_segment_size(rounded);
  }
  if (!fits_capacity(more)) {
    release_cached();
    ++stats_.retries;
    if (expandable_) {  // the tail may have been unmapped: ask again
      const Segment& seg = segments_[seg_id];
      tail_free = seg.last != kNoBlock && blocks_[seg.last].free ? blocks_[seg.last].size : 0;
      const std::int64_t page = small ? kAllocatorSmallBuffer : kAllocatorLargeBuffer;
      more = page * ((rounded - tail_free + page - 1) / page);
    }
    if (!fits_capacity(more)) ++stats_.out_of_memory;
  }
  ++stats_.segments;
  stats_.reserved += more;
  if (!expandable_) {
    Segment s;
    s.stream = stream;
    s.small = small;
    s.size = more;
    segments_.push_back(s);
    seg_id = static_cast<std::uint32_t>(segments_.size() - 1);
    const std::uint32_t b = new_block(seg_id, 0, more);
    segments_[seg_id].last = b;
    insert_free(b);
    return b;
  }
  Segment& seg = segments_[seg_id];
  if (tail_free > 0) {
    const std::uint32_t b = seg.last;
    erase_free(b);
    blocks_[b].size += more;
    seg.size += more;
    insert_free(b);
    return b;
  }
  const std::uint32_t b = new_block(seg_id, seg.size, more);
  blocks_[b].prev = seg.last;
  if (seg.last != kNoBlock) blocks_[seg.last].next = b;
  seg.last = b;
  seg.size += more;
  insert_free(b);
  return b;
}

void CachingAllocator::note_peaks() {
  stats_.peak_requested = std::max(stats_.peak_requested, stats_.requested);
  stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
  stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
}

void CachingAllocator::hand_out(std::uint32_t b, std::int64_t rounded, std::int64_t bytes,
                                bool small) {
  erase_free(b);
  if (allocator_should_split(blocks_[b].size, rounded, small, expandable_)) {
    const std::uint32_t rest =
        new_block(blocks_[b].segment, blocks_[b].address + rounded, blocks_[b].size - rounded);
    Block& k = blocks_[b];  // new_block may have moved the vector
    blocks_[rest].prev = b;
    blocks_[rest].next = k.next;
    if (k.next != kNoBlock)
      blocks_[k.next].prev = rest;
    else
      segments_[k.segment].last = rest;
    k.next = rest;
    k.size = rounded;
    insert_free(rest);
  }
  Block& k = blocks_[b];
  k.free = false;
  k.requested = bytes;
  stats_.allocated += k.size;
  stats_.requested += bytes;
  note_peaks();
}

std::uint32_t CachingAllocator::allocate(std::int64_t bytes, std::uint32_t stream) {
  if (bytes <= 0) throw std::invalid_argument("CachingAllocator::allocate: bytes must be > 0");
  const std::int64_t rounded = allocator_round_size(bytes);
  const bool small = rounded <= kAllocatorSmallSize;
  std::uint32_t b = find_free(stream, small, rounded);
  if (b == kNoBlock) b = grow(stream, small, rounded);
  hand_out(b, rounded, bytes, small);
  return b;
}

// Marks `b` free and merges it with free neighbours of its segment (try_merge_blocks).
void CachingAllocator::free_block(std::uint32_t b) {
  Block& k = blocks_[b];
  k.free = true;
  k.requested = 0;
  for (const std::uint32_t n : {k.prev, k.next}) {
    if (n == kNoBlock || !blocks_[n].free) continue;
    erase_free(n);
    Block& m = blocks_[n];
    Block& self = blocks_[b];
    if (m.address < self.address) {  // absorb the previous block
      self.address = m.address;
      self.prev = m.prev;
      if (m.prev != kNoBlock) blocks_[m.prev].next = b;
    } else {
      self.next = m.next;
      if (m.next != kNoBlock)
        blocks_[m.next].prev = b;
      else
        segments_[self.segment].last = b;
    }
    self.size += m.size;
    m.size = 0;
  }
  insert_free(b);
}

void CachingAllocator::free(std::uint32_t handle) {
  if (handle >= blocks_.size() || blocks_[handle].free) {
    throw std::invalid_argument("CachingAllocator::free: not a live allocation");
  }
  stats_.allocated -= blocks_[handle].size;
  stats_.requested -= blocks_[handle].requested;
  free_block(handle);
}

void CachingAllocator::free_tail(std::uint32_t handle, std::int64_t bytes) {
  if (handle >= blocks_.size() || blocks_[handle].free || bytes <= 0 ||
      bytes >= blocks_[handle].requested) {
    throw std::invalid_argument("CachingAllocator::free_tail: not a tail of a live allocation");
  }
  Block& k = blocks_[handle];
  const Segment& seg = segments_[k.segment];
  const std::int64_t keep = k.requested - bytes;
  const std::int64_t rounded = allocator_round_size(keep);
  stats_.requested -= bytes;
  k.requested = keep;
  if (!allocator_should_split(k.size, rounded, seg.small, expandable_)) return;
  const std::uint32_t tail = new_block(k.segment, k.address + rounded, k.size - rounded);
  Block& self = blocks_[handle];
  stats_.allocated -= self.size - rounded;
  blocks_[tail].prev = handle;
  blocks_[tail].next = self.next;
  blocks_[tail].free = false;
  if (self.next != kNoBlock)
    blocks_[self.next].prev = tail;
  else
    segments_[self.segment].last = tail;
  self.next = tail;
  self.size = rounded;
  free_block(tail);
}

std::int64_t CachingAllocator::requested_of(std::uint32_t handle) const {
  return handle < blocks_.size() && !blocks_[handle].free ? blocks_[handle].requested : 0;
}

void CachingAllocator::reset_peaks() {
  stats_.peak_requested = stats_.requested;
  stats_.peak_allocated = stats_.allocated;
  stats_.peak_reserved = stats_.reserved;
}

}  // namespace parasim::cost
