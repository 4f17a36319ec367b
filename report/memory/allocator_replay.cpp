// The ledger replayed through the caching allocator (allocator_replay.hpp).
#include "report/memory/allocator_replay.hpp"

#include <map>

#include "costmodel/caching_allocator.hpp"

namespace parasim::strat {
namespace {

// Live allocations of one category by requested size, most recent last.
using Live = std::map<std::int64_t, std::vector<std::uint32_t>>;

void take(Live& live, std::int64_t bytes, std::uint32_t handle) {
  live[bytes].push_back(handle);
}

// Frees `bytes` of the category: the live allocation of exactly that size, else the tail of the
// largest (whole ones while the largest is smaller; counted in `inexact`). Returns the bytes no
// live allocation held.
std::int64_t give_back(cost::CachingAllocator& a, Live& live, std::int64_t bytes,
                       std::int64_t& inexact) {
  const auto exact = live.find(bytes);
  if (exact != live.end()) {
    a.free(exact->second.back());
    exact->second.pop_back();
    if (exact->second.empty()) live.erase(exact);
    return 0;
  }
  ++inexact;
  while (bytes > 0 && !live.empty()) {
    auto largest = std::prev(live.end());
    const std::int64_t size = largest->first;
    const std::uint32_t h = largest->second.back();
    largest->second.pop_back();
    if (largest->second.empty()) live.erase(largest);
    if (size > bytes) {
      a.free_tail(h, bytes);
      take(live, size - bytes, h);
      return 0;
    }
    a.free(h);
    bytes -= size;
  }
  return bytes;
}

}  // namespace

std::vector<AllocatorReplay> replay_allocator(const sim::Workload& w, const sim::SimResult& r,
                                              const AllocatorReplayOptions& options) {
  const std::size_t devices = w.device_count();
  const std::size_t categories = w.memory_categories().size();
  // Each device's compute stream: its first device stream (the builder adds it first).
  std::vector<sim::StreamId> compute(devices, sim::kNone);
  for (sim::StreamId s = 0; s < w.stream_count(); ++s) {
    const auto& st = w.stream(s);
    if (st.kind == sim::StreamKind::kDevice && compute[st.device] == sim::kNone) {
      compute[st.device] = s;
    }
  }
  // Each op's pieces (set_memory calls as given), in call order: first[op] .. first[op + 1].
  const auto& pieces = w.memory_pieces();
  std::vector<std::uint32_t> first(w.op_count() + 1, 0);
  for (const sim::MemoryPiece& p : pieces) ++first[p.op + 1];
  for (std::size_t o = 1; o < first.size(); ++o) first[o] += first[o - 1];
  std::vector<std::uint32_t> order(pieces.size());
  {
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (std::uint32_t i = 0; i < pieces.size(); ++i) order[fill[pieces[i].op]++] = i;
  }
  // Whether every device's step frees what it allocates.
  std::vector<std::int64_t> net(devices * sim::kMaxMemoryCategories, 0);
  for (const sim::MemoryEvent& e : r.memory_log) {
    const sim::DeviceId dev = w.device_of(e.op);
    for (const sim::MemoryDelta* d = w.memory_delta(e.op); d != nullptr; d = w.next_delta(*d)) {
      net[dev * sim::kMaxMemoryCategories + d->category] += e.at_start ? d->at_start : d->at_end;
    }
  }

  std::vector<cost::CachingAllocator> alloc;
  std::vector<std::vector<Live>> live(devices, std::vector<Live>(categories + 1));
  std::vector<AllocatorReplay> out(devices);
  alloc.reserve(devices);
  for (sim::DeviceId dev = 0; dev < devices; ++dev) {
    const std::int64_t cap = dev < options.capacity_bytes.size() ? options.capacity_bytes[dev] : 0;
    alloc.emplace_back(options.expandable_segments, cap);
    const std::uint32_t stream = compute[dev] == sim::kNone ? 0 : compute[dev];
    for (std::size_t c = 0; c < categories; ++c) {
      const std::int64_t bytes = w.base_memory(dev, static_cast<std::uint8_t>(c));
      if (bytes > 0) take(live[dev][c], bytes, alloc[dev].allocate(bytes, stream));
    }
    const std::int64_t extra =
        dev < options.extra_base_bytes.size() ? options.extra_base_bytes[dev] : 0;
    if (extra > 0) take(live[dev][categories], extra, alloc[dev].allocate(extra, stream));
    bool closed = true;
    for (std::size_t c = 0; c < categories; ++c) {
      closed = closed && net[dev * sim::kMaxMemoryCategories + c] == 0;
    }
    out[dev].two_steps = closed;
  }
  const auto replay_once = [&](bool second) {
    for (const sim::MemoryEvent& e : r.memory_log) {
      const sim::DeviceId dev = w.device_of(e.op);
      if (second && !out[dev].two_steps) continue;
      const sim::StreamId own = w.op(e.op).stream;
      const sim::StreamId stream = w.op(e.op).kind == sim::OpKind::kGroupMember &&
                                           w.stream(own).kind == sim::StreamKind::kDevice
                                       ? own
                                       : compute[dev];
      for (std::uint32_t k = first[e.op]; k < first[e.op + 1]; ++k) {
        const sim::MemoryPiece& p = pieces[order[k]];
        if (p.at_start != e.at_start) continue;
        Live& l = live[dev][p.category];
        if (p.bytes > 0) {
          take(l, p.bytes, alloc[dev].allocate(p.bytes, stream));
        } else {
          out[dev].unmatched_free_bytes +=
              give_back(alloc[dev], l, -p.bytes, out[dev].inexact_frees);
        }
      }
    }
  };
  replay_once(false);
  replay_once(true);
  for (sim::DeviceId dev = 0; dev < devices; ++dev) {
    const auto& s = alloc[dev].stats();
    out[dev].requested_peak_bytes = static_cast<double>(s.peak_requested);
    out[dev].allocated_peak_bytes = static_cast<double>(s.peak_allocated);
    out[dev].reserved_peak_bytes = static_cast<double>(s.peak_reserved);
    out[dev].retries = s.retries;
    out[dev].out_of_memory = s.out_of_memory;
  }
  return out;
}

}  // namespace parasim::strat
