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

namespace {

// Bytes of the whole pages of `page` bytes inside [address, address + size).
std::int64_t whole_pages(std::int64_t address, std::int64_t size, std::int64_t page) {
  const std::int64_t first = page * ((address + page - 1) / page);
  const std::int64_t end = page * ((address + size) / page);
  return std::max<std::int64_t>(0, end - first);
}

}  // namespace

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

// Best fit; with expandable segments the segment's end block (which can grow into the unmapped
// space after it) only when no other free block holds the request (get_free_block compares
// expandable sizes).
std::uint32_t CachingAllocator::split_block(std::uint32_t b, std::int64_t size) {
  const std::uint32_t rest =
      new_block(blocks_[b].segment, blocks_[b].address + size, blocks_[b].size - size);
  Block& k = blocks_[b];  // new_block may have moved the vector
  blocks_[rest].prev = b;
  blocks_[rest].next = k.next;
  if (k.next != kNoBlock) {
    blocks_[k.next].prev = rest;
  } else {
    segments_[k.segment].last = rest;
  }
  k.next = rest;
  k.size = size;
  return rest;
}

std::uint32_t CachingAllocator::find_free(std::uint32_t stream, bool small,
                                          std::int64_t rounded) const {
  const auto pool = free_.find(pool_key(stream, small));
  if (pool == free_.end()) return kNoBlock;
  auto it = pool->second.lower_bound({rounded, 0, 0, 0});
  if (it == pool->second.end()) return kNoBlock;
  if (expandable_) {
    const std::uint32_t b = std::get<3>(*it);
    const auto next = std::next(it);
    if (segments_[blocks_[b].segment].last == b && next != pool->second.end()) it = next;
  }
  return std::get<3>(*it);
}

bool CachingAllocator::fits_capacity(std::int64_t more) const {
  return capacity_ <= 0 || stats_.reserved + more <= capacity_;
}

void CachingAllocator::make_room(std::int64_t more, std::int64_t request) {
  if (fits_capacity(more)) return;
  release_cached();
  ++stats_.retries;
  if (fits_capacity(more)) return;
  if (stats_.out_of_memory++ == 0) stats_.first_out_of_memory_bytes = request;
  capacity_ = 0;  // the run has failed here: from now on the figures are those it would need
}

// An expandable segment on the out-of-memory path (unmap_block): the whole pages inside each free
// block are unmapped; the segment's end shrinks to the last page in use.
void CachingAllocator::release_expandable(Segment& seg) {
  const std::int64_t page = page_of(seg);
  for (std::uint32_t b = seg.last; b != kNoBlock;) {
    Block& k = blocks_[b];
    const std::uint32_t prev = k.prev;
    if (!k.free) {
      b = prev;
      continue;
    }
    const std::int64_t first_page = page * ((k.address + page - 1) / page);
    if (b == seg.last) {  // the end: pages from first_page on go, the extent shrinks
      const std::int64_t cut = seg.size - first_page;
      if (cut > 0) {
        erase_free(b);
        stats_.reserved -= cut - k.unmapped;
        k.unmapped = 0;
        k.size -= cut;
        seg.size = first_page;
        if (k.size > 0) {
          insert_free(b);
        } else {
          seg.last = prev;
          if (prev != kNoBlock) blocks_[prev].next = kNoBlock;
        }
      }
    } else {  // inside: the hole stays part of the block, mapped again when it is handed out
      const std::int64_t whole = whole_pages(k.address, k.size, page);
      stats_.reserved -= whole - k.unmapped;
      k.unmapped = whole;
    }
    b = prev;
  }
}

// release_cached_blocks: every segment with no block in use goes back to the device (expandable:
// release_expandable).
void CachingAllocator::release_cached() {
  if (expandable_) {
    for (Segment& seg : segments_) release_expandable(seg);
    return;
  }
  // Backwards, so that the segment swapped into a released one's place was already seen.
  for (std::size_t i = live_segments_.size(); i-- > 0;) {
    const std::uint32_t s = live_segments_[i];
    Segment& seg = segments_[s];
    const std::uint32_t last = seg.last;
    if (!blocks_[last].free || blocks_[last].prev != kNoBlock) continue;  // a block in use
    erase_free(last);
    stats_.reserved -= seg.size;
    seg.released = true;
    seg.last = kNoBlock;
    live_segments_[i] = live_segments_.back();
    live_segments_.pop_back();
  }
}

// A new segment (or, expandable, more pages at the segment's end) for a request that fits no
// cached block; returns a free block that holds it.
std::uint32_t CachingAllocator::grow(std::uint32_t stream, bool small, std::int64_t rounded) {
  if (!expandable_) {
    const std::int64_t more = allocator_segment_size(rounded);
    make_room(more, rounded);
    ++stats_.segments;
    stats_.reserved += more;
    Segment s;
    s.stream = stream;
    s.small = small;
    s.size = more;
    segments_.push_back(s);
    const auto seg_id = static_cast<std::uint32_t>(segments_.size() - 1);
    live_segments_.push_back(seg_id);
    const std::uint32_t b = new_block(seg_id, 0, more);
    segments_[seg_id].last = b;
    insert_free(b);
    return b;
  }
  const std::uint64_t key = pool_key(stream, small);
  auto it = expandable_segment_.find(key);
  if (it == expandable_segment_.end()) {
    Segment s;
    s.stream = stream;
    s.small = small;
    segments_.push_back(s);
    it = expandable_segment_.emplace(key, static_cast<std::uint32_t>(segments_.size() - 1)).first;
  }
  const std::uint32_t seg_id = it->second;
  const std::int64_t page = small ? kAllocatorSmallBuffer : kAllocatorLargeBuffer;
  // Pages to map after the free block at the end (if any); its own holes are mapped when it is
  // handed out (hand_out).
  const auto missing = [&] {
    const Segment& seg = segments_[seg_id];
    const std::int64_t tail =
        seg.last != kNoBlock && blocks_[seg.last].free ? blocks_[seg.last].size : 0;
    return page * ((rounded - tail + page - 1) / page);
  };
  std::int64_t more = missing();
  if (!fits_capacity(more)) {  // make_room, asking again after the release (it may cut the end)
    release_cached();
    ++stats_.retries;
    more = missing();
    if (!fits_capacity(more)) {
      if (stats_.out_of_memory++ == 0) stats_.first_out_of_memory_bytes = rounded;
      capacity_ = 0;
    }
  }
  ++stats_.segments;
  stats_.reserved += more;
  Segment& seg = segments_[seg_id];
  if (seg.last != kNoBlock && blocks_[seg.last].free) {
    const std::uint32_t b = seg.last;
    erase_free(b);
    blocks_[b].size += more;
    seg.size += more;
    insert_free(b);
    return b;
  }
  const std::uint32_t b = new_block(seg_id, seg.size, more);
  Segment& grown = segments_[seg_id];
  blocks_[b].prev = grown.last;
  if (grown.last != kNoBlock) blocks_[grown.last].next = b;
  grown.last = b;
  grown.size += more;
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
  blocks_[b].free = false;  // a release on the way (make_room) leaves it alone
  // Expandable: the holes the request covers are mapped again (try_allocate_expandable_block maps
  // only the pages it needs). Where the holes lie in a merged block is not kept: the request takes
  // at most the pages it can touch, ceil(rounded / page) + 1; the rest stays with the split-off
  // block, up to its whole pages.
  std::int64_t left_unmapped = 0;
  if (blocks_[b].unmapped > 0) {
    const std::int64_t page = page_of(segments_[blocks_[b].segment]);
    const std::int64_t holes =
        std::min(blocks_[b].unmapped, page * ((rounded + page - 1) / page + 1));
    left_unmapped = blocks_[b].unmapped - holes;
    make_room(holes, rounded);
    blocks_[b].unmapped = 0;
    ++stats_.segments;
    stats_.reserved += holes;
  }
  if (allocator_should_split(blocks_[b].size, rounded, small, expandable_)) {
    const std::uint32_t rest = split_block(b, rounded);
    if (left_unmapped > 0) {  // capped at the rest's whole pages; any excess is mapped now
      const Block& r = blocks_[rest];
      const std::int64_t whole = whole_pages(r.address, r.size, page_of(segments_[r.segment]));
      blocks_[rest].unmapped = std::min(left_unmapped, whole);
      stats_.reserved += left_unmapped - blocks_[rest].unmapped;
      left_unmapped = 0;
    }
    insert_free(rest);
  }
  if (left_unmapped > 0) {  // not split: the whole block is mapped
    make_room(left_unmapped, rounded);
    stats_.reserved += left_unmapped;
  }
  Block& k = blocks_[b];
  k.requested = bytes;
  stats_.allocated += k.size;
  stats_.requested += bytes;
  note_peaks();
}

std::uint32_t CachingAllocator::allocate(std::int64_t bytes, std::uint32_t stream) {
  if (bytes <= 0 || bytes > kAllocatorMaxRequest) {
    throw std::invalid_argument("CachingAllocator::allocate: bytes must be in (0, 1 PiB]");
  }
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
      if (m.next != kNoBlock) {
        blocks_[m.next].prev = b;
      } else {
        segments_[self.segment].last = b;
      }
    }
    self.size += m.size;
    self.unmapped += m.unmapped;
    m.size = 0;
    m.unmapped = 0;
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
  const bool small = segments_[k.segment].small;
  const std::int64_t keep = k.requested - bytes;
  const std::int64_t rounded = allocator_round_size(keep);
  stats_.requested -= bytes;
  k.requested = keep;
  if (!allocator_should_split(k.size, rounded, small, expandable_)) return;
  stats_.allocated -= k.size - rounded;
  const std::uint32_t tail = split_block(handle, rounded);
  blocks_[tail].free = false;  // free_block marks it free and merges it
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
