// PyTorch's caching allocator rules (costmodel/caching_allocator.hpp), each against the figure
// CUDACachingAllocator.cpp's rules give by hand.
#include "costmodel/caching_allocator.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using parasim::cost::CachingAllocator;
constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kMiB = 1024 * kKiB;
constexpr std::int64_t kGiB = 1024 * kMiB;

}  // namespace

TEST_CASE("requests are rounded to 512 B and segments sized by request class") {
  using namespace parasim::cost;
  CHECK(allocator_round_size(1) == 512);
  CHECK(allocator_round_size(512) == 512);
  CHECK(allocator_round_size(513) == 1024);
  CHECK(allocator_segment_size(600 * kKiB) == 2 * kMiB);  // small pool
  CHECK(allocator_segment_size(1 * kMiB) == 2 * kMiB);
  CHECK(allocator_segment_size(1 * kMiB + 512) == 20 * kMiB);
  CHECK(allocator_segment_size(3 * kMiB) == 20 * kMiB);
  CHECK(allocator_segment_size(10 * kMiB) == 10 * kMiB);  // >= 10 MiB: rounded to 2 MiB
  CHECK(allocator_segment_size(11 * kMiB + 512) == 12 * kMiB);
  CHECK(allocator_should_split(2 * kMiB, 600 * kKiB, true, false));
  CHECK_FALSE(allocator_should_split(1024, 1024 - 256, true, false));
  CHECK(allocator_should_split(20 * kMiB, 3 * kMiB, false, false));
  CHECK_FALSE(allocator_should_split(4 * kMiB, 3 * kMiB, false, false));  // rest exactly 1 MiB
  CHECK(allocator_should_split(4 * kMiB, 3 * kMiB, false, true));         // expandable: >= 512 B
}

TEST_CASE("3 MiB tensors: six to a 20 MiB segment, the seventh opens a second") {
  CachingAllocator a;
  for (int i = 0; i < 6; ++i) a.allocate(3 * kMiB, 0);
  CHECK(a.stats().reserved == 20 * kMiB);
  CHECK(a.stats().allocated == 18 * kMiB);
  a.allocate(3 * kMiB, 0);  // the 2 MiB tail cannot hold it
  CHECK(a.stats().reserved == 40 * kMiB);
  CHECK(a.stats().allocated == 21 * kMiB);
  CHECK(a.stats().segments == 2);

  CachingAllocator e(true);  // expandable: packed end to end in 20 MiB pages
  for (int i = 0; i < 7; ++i) e.allocate(3 * kMiB, 0);
  CHECK(e.stats().reserved == 40 * kMiB);
  CHECK(e.stats().allocated == 21 * kMiB);
}

TEST_CASE("a block whose rest is at most 1 MiB is handed out whole: allocated carries the slack") {
  CachingAllocator a;
  const auto small_one = a.allocate(3 * kMiB + kMiB / 2, 0);
  a.allocate(16 * kMiB + kMiB / 2, 0);  // the rest of the 20 MiB segment
  CHECK(a.stats().reserved == 20 * kMiB);
  a.free(small_one);
  a.allocate(3 * kMiB, 0);  // best fit: the 3.5 MiB block, 0.5 MiB left is not split off
  CHECK(a.stats().requested == 19 * kMiB + kMiB / 2);
  CHECK(a.stats().allocated == 20 * kMiB);
  CHECK(a.stats().reserved == 20 * kMiB);
}

TEST_CASE("600 KiB tensors: three to a 2 MiB small-pool segment") {
  CachingAllocator a;
  for (int i = 0; i < 10; ++i) a.allocate(600 * kKiB, 0);
  CHECK(a.stats().reserved == 4 * 2 * kMiB);  // ceil(10 / 3) segments
  CHECK(a.stats().allocated == 10 * 600 * kKiB);
  CachingAllocator e(true);
  for (int i = 0; i < 10; ++i) e.allocate(600 * kKiB, 0);
  CHECK(e.stats().reserved == 3 * 2 * kMiB);  // ceil(6000 KiB / 2 MiB) pages
}

TEST_CASE("a cached 1 GiB block split by a 600 MiB tensor cannot hold a new 1 GiB one") {
  CachingAllocator a;
  a.free(a.allocate(kGiB, 0));
  CHECK(a.stats().reserved == kGiB);
  CHECK(a.stats().allocated == 0);
  a.allocate(600 * kMiB, 0);
  a.allocate(kGiB, 0);
  CHECK(a.stats().reserved == 2 * kGiB);
  CHECK(a.stats().allocated == kGiB + 600 * kMiB);
  CHECK(a.stats().peak_reserved == 2 * kGiB);

  CachingAllocator e(true);
  e.allocate(kGiB, 0);
  CHECK(e.stats().reserved == 52 * 20 * kMiB);  // 1040 MiB of 20 MiB pages
}

TEST_CASE("blocks are reused only on the stream that freed them") {
  CachingAllocator a;
  a.free(a.allocate(64 * kMiB, 0));
  a.allocate(64 * kMiB, 1);
  CHECK(a.stats().reserved == 128 * kMiB);
  a.allocate(64 * kMiB, 0);
  CHECK(a.stats().reserved == 128 * kMiB);
}

TEST_CASE("freed neighbours merge into one block a larger request can take") {
  CachingAllocator a;
  const auto x = a.allocate(4 * kMiB, 0);
  const auto y = a.allocate(4 * kMiB, 0);
  const auto z = a.allocate(4 * kMiB, 0);
  a.allocate(8 * kMiB, 0);  // the segment's last 8 MiB
  CHECK(a.stats().reserved == 20 * kMiB);
  a.free(y);
  a.free(x);
  a.free(z);
  a.allocate(12 * kMiB, 0);
  CHECK(a.stats().reserved == 20 * kMiB);
  CHECK(a.stats().allocated == 20 * kMiB);
}

TEST_CASE("free_tail returns a live tensor's tail as a free block") {
  CachingAllocator a;
  const auto h = a.allocate(100 * kMiB, 0);
  a.free_tail(h, 40 * kMiB);
  CHECK(a.stats().requested == 60 * kMiB);
  CHECK(a.stats().allocated == 60 * kMiB);
  CHECK(a.requested_of(h) == 60 * kMiB);
  a.allocate(40 * kMiB, 0);  // fits the freed tail
  CHECK(a.stats().reserved == 100 * kMiB);
  const auto g = a.allocate(3 * kMiB, 1);
  a.free_tail(g, kMiB / 2);  // the rest would be under 1 MiB: kept in the block as slack
  CHECK(a.stats().allocated == 100 * kMiB + 3 * kMiB);
  CHECK(a.stats().requested == 100 * kMiB + 2 * kMiB + kMiB / 2);
}

TEST_CASE("near the capacity the cache is freed and the cudaMalloc retried, then out of memory") {
  CachingAllocator a(false, 40 * kMiB);
  a.free(a.allocate(30 * kMiB, 0));
  a.allocate(35 * kMiB, 1);  // 30 + 36 > 40: the cached 30 MiB segment is released
  CHECK(a.stats().retries == 1);
  CHECK(a.stats().out_of_memory == 0);
  CHECK(a.stats().reserved == 36 * kMiB);
  CHECK(a.stats().peak_reserved == 36 * kMiB);
  a.allocate(10 * kMiB, 1);  // nothing cached to free
  CHECK(a.stats().retries == 2);
  CHECK(a.stats().out_of_memory == 1);

  CachingAllocator e(true, 40 * kMiB);
  e.free(e.allocate(30 * kMiB, 0));  // 40 MiB mapped, all free
  e.allocate(20 * kMiB, 1);          // another stream's segment: stream 0's pages are unmapped
  CHECK(e.stats().retries == 1);
  CHECK(e.stats().out_of_memory == 0);
  CHECK(e.stats().reserved == 20 * kMiB);
}

TEST_CASE("requested <= allocated <= reserved through a random sequence, and nothing leaks") {
  for (const bool expandable : {false, true}) {
    CachingAllocator a(expandable);
    std::mt19937_64 rng(42);
    std::vector<std::uint32_t> live;
    for (int i = 0; i < 4000; ++i) {
      if (live.empty() || rng() % 3 != 0) {
        const std::int64_t bytes = 1 + static_cast<std::int64_t>(rng() % (48 * kMiB));
        live.push_back(a.allocate(bytes, static_cast<std::uint32_t>(rng() % 2)));
      } else {
        const std::size_t k = rng() % live.size();
        a.free(live[k]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      }
      const auto& s = a.stats();
      REQUIRE(s.requested <= s.allocated);
      REQUIRE(s.allocated <= s.reserved);
    }
    const std::int64_t reserved = a.stats().reserved;
    for (const auto h : live) a.free(h);
    CHECK(a.stats().allocated == 0);
    CHECK(a.stats().requested == 0);
    CHECK(a.stats().reserved == reserved);  // nothing returned without a capacity
  }
}

TEST_CASE("expandable segments: best fit passes over the block that can grow") {
  CachingAllocator e(true);
  const auto eight = e.allocate(8 * kMiB, 0);
  e.allocate(4 * kMiB, 0);
  e.allocate(3 * kMiB, 0);  // one 20 MiB page: 5 MiB free at the end
  e.free(eight);
  e.allocate(4 * kMiB, 0);  // from the 8 MiB hole, not from the end
  CHECK(e.stats().reserved == 20 * kMiB);
  e.allocate(6 * kMiB, 0);  // holes of 4 and 5 MiB: another page is mapped after the end
  CHECK(e.stats().reserved == 40 * kMiB);
}

TEST_CASE("expandable segments: at the capacity the pages inside free blocks are unmapped") {
  CachingAllocator e(true, 60 * kMiB);
  const auto a = e.allocate(20 * kMiB, 0);
  e.allocate(20 * kMiB, 0);
  e.allocate(10 * kMiB, 0);  // three pages mapped, 10 MiB free at the end
  CHECK(e.stats().reserved == 60 * kMiB);
  e.free(a);                 // a whole page free inside the segment
  e.allocate(15 * kMiB, 1);  // another stream's page: the hole is unmapped to make room
  CHECK(e.stats().retries == 1);
  CHECK(e.stats().out_of_memory == 0);
  CHECK(e.stats().reserved == 60 * kMiB);
  e.allocate(20 * kMiB, 0);  // fits the hole, whose page must be mapped again: no room left
  CHECK(e.stats().out_of_memory == 1);
  CHECK(e.stats().first_out_of_memory_bytes == 20 * kMiB);
}

TEST_CASE("a request over the model's limit is refused, not wrapped around") {
  CachingAllocator a;
  CHECK_THROWS_AS(a.allocate(parasim::cost::kAllocatorMaxRequest + 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(a.allocate(0, 0), std::invalid_argument);
  CHECK(a.stats().reserved == 0);
}

TEST_CASE("expandable segments: a release that cuts the request's own free end is asked again") {
  CachingAllocator e(true, 40 * kMiB);
  e.allocate(10 * kMiB, 0);
  const auto b = e.allocate(15 * kMiB, 0);  // two pages mapped, 15 MiB free at the end
  e.free(b);                                // the end block: 30 MiB from 10 MiB on
  CHECK(e.stats().reserved == 40 * kMiB);
  // 35 MiB: the end block lacks 5 MiB (one page), which does not fit; the release cuts the end
  // to the page in use, so the request then lacks 25 MiB (two pages): 20 + 40 > 40.
  e.allocate(35 * kMiB, 0);
  CHECK(e.stats().retries == 1);
  CHECK(e.stats().out_of_memory == 1);
  CHECK(e.stats().first_out_of_memory_bytes == 35 * kMiB);
}

TEST_CASE("expandable segments: a request maps again only the holes it can touch") {
  CachingAllocator e(true, 200 * kMiB);
  std::vector<std::uint32_t> h;
  for (int i = 0; i < 9; ++i) h.push_back(e.allocate(20 * kMiB, 0));  // nine pages
  const auto tail = e.allocate(10 * kMiB, 0);
  CHECK(e.stats().reserved == 200 * kMiB);
  for (int i = 0; i < 8; ++i) e.free(h[static_cast<std::size_t>(i)]);  // 160 MiB free inside
  // Another stream: the 8 pages inside are unmapped (the 2 in use stay), 5 mapped anew.
  e.allocate(100 * kMiB, 1);
  CHECK(e.stats().out_of_memory == 0);
  CHECK(e.stats().reserved == 40 * kMiB + 100 * kMiB);
  // One hole page needed; the model maps at most the 2 pages a 20 MiB request can touch (it does
  // not keep where a merged block's holes lie), never all eight.
  e.allocate(20 * kMiB, 0);
  CHECK(e.stats().reserved >= 140 * kMiB + 20 * kMiB);
  CHECK(e.stats().reserved <= 140 * kMiB + 2 * 20 * kMiB);
  CHECK(e.stats().out_of_memory == 0);
  (void)tail;
}
