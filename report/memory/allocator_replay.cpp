// The ledger replayed through the caching allocator (allocator_replay.hpp).
#include "report/memory/allocator_replay.hpp"

#include <map>
#include <utility>

#include "costmodel/caching_allocator.hpp"

namespace parasim::strat {
namespace {

// Live allocations of one category by (tag, requested size), oldest first.
using Live = std::map<std::pair<std::uint64_t, std::int64_t>, std::vector<std::uint32_t>>;

void take(Live& live, std::uint64_t tag, std::int64_t bytes, std::uint32_t handle) {
  live[{tag, bytes}].push_back(handle);
}

// Frees the live allocation of `live` with this tag and size, if there is one: of a named tensor
// (tag > 0) the most recent, of an unnamed buffer the oldest (gathered units, reduce-scatter
// inputs, buckets are released in the order they were taken).
bool free_exact(cost::CachingAllocator& a, Live& live, std::uint64_t tag, std::int64_t bytes) {
  const auto exact = live.find({tag, bytes});
  if (exact == live.end()) return false;
  auto& handles = exact->second;
  if (tag > 0) {
    a.free(handles.back());
    handles.pop_back();
  } else {
    a.free(handles.front());  // few live buffers share a size: the shift is short
    handles.erase(handles.begin());
  }
  if (handles.empty()) live.erase(exact);
  return true;
}

// Frees `bytes` of a category: the step's live allocation of this tag and size, else the base
// one of this size, else the tail of the step's largest (whole ones while the largest is
// smaller; counted in `inexact`). Returns the bytes no live allocation held.
std::int64_t give_back(cost::CachingAllocator& a, Live& live, Live& base, std::uint64_t tag,
                       std::int64_t bytes, std::int64_t& inexact) {
  if (free_exact(a, live, tag, bytes) || free_exact(a, base, 0, bytes)) return 0;
  ++inexact;
  while (bytes > 0 && !live.empty()) {
    auto largest = live.begin();
    for (auto it = live.begin(); it != live.end(); ++it) {
      if (it->first.second > largest->first.second) largest = it;
    }
    const auto [key_tag, size] = largest->first;
    const std::uint32_t h = largest->second.back();
    largest->second.pop_back();
    if (largest->second.empty()) live.erase(largest);
    if (size > bytes) {
      a.free_tail(h, bytes);
      take(live, key_tag, size - bytes, h);
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
  std::vector<std::vector<Live>> base(devices, std::vector<Live>(categories + 1));
  std::vector<AllocatorReplay> out(devices);
  std::vector<bool> stopped(devices, false);  // a request over the model's limit: not replayed
  const auto out_of_memory = [&](sim::DeviceId dev) { return stopped[dev]; };
  alloc.reserve(devices);
  for (sim::DeviceId dev = 0; dev < devices; ++dev) {
    const std::int64_t cap = dev < options.capacity_bytes.size() ? options.capacity_bytes[dev] : 0;
    alloc.emplace_back(options.expandable_segments, cap);
    const std::uint32_t stream = compute[dev] == sim::kNone ? 0 : compute[dev];
    const auto base_allocation = [&](std::size_t c, std::int64_t bytes) {
      if (bytes <= 0 || out_of_memory(dev)) return;
      if (bytes > cost::kAllocatorMaxRequest) {
        stopped[dev] = true;
        out[dev].first_out_of_memory_bytes = bytes;
        return;
      }
      take(base[dev][c], 0, bytes, alloc[dev].allocate(bytes, stream));
    };
    for (std::size_t c = 0; c < categories; ++c) {
      base_allocation(c, w.base_memory(dev, static_cast<std::uint8_t>(c)));
    }
    base_allocation(categories,
                    dev < options.extra_base_bytes.size() ? options.extra_base_bytes[dev] : 0);
    bool closed = true;
    for (std::size_t c = 0; c < categories; ++c) {
      closed = closed && net[dev * sim::kMaxMemoryCategories + c] == 0;
    }
    out[dev].two_steps = closed;
  }
  const auto replay_once = [&](bool second) {
    for (const sim::MemoryEvent& e : r.memory_log) {
      const sim::DeviceId dev = w.device_of(e.op);
      if ((second && !out[dev].two_steps) || out_of_memory(dev)) continue;
      const sim::StreamId own = w.op(e.op).stream;
      const sim::StreamId stream = w.op(e.op).kind == sim::OpKind::kGroupMember &&
                                           w.stream(own).kind == sim::StreamKind::kDevice
                                       ? own
                                       : compute[dev];
      for (std::uint32_t k = first[e.op]; k < first[e.op + 1]; ++k) {
        const sim::MemoryPiece& p = pieces[order[k]];
        if (p.at_start != e.at_start) continue;
        Live& l = live[dev][p.category];
        if (p.bytes > cost::kAllocatorMaxRequest) {
          stopped[dev] = true;
          out[dev].first_out_of_memory_bytes = p.bytes;
          break;
        }
        if (p.bytes > 0) {
          take(l, p.tag, p.bytes, alloc[dev].allocate(p.bytes, stream));
        } else if (p.bytes >= -cost::kAllocatorMaxRequest) {
          out[dev].unmatched_free_bytes += give_back(alloc[dev], l, base[dev][p.category], p.tag,
                                                     -p.bytes, out[dev].inexact_frees);
        } else {
          out[dev].unmatched_free_bytes += cost::kAllocatorMaxRequest;
        }
        if (out_of_memory(dev)) break;
      }
    }
  };
  replay_once(false);
  std::vector<std::int64_t> first_retries(devices);
  for (sim::DeviceId dev = 0; dev < devices; ++dev) {
    first_retries[dev] = alloc[dev].stats().retries;
  }
  replay_once(true);
  for (sim::DeviceId dev = 0; dev < devices; ++dev) {
    const auto& s = alloc[dev].stats();
    out[dev].requested_peak_bytes = static_cast<double>(s.peak_requested);
    out[dev].allocated_peak_bytes = static_cast<double>(s.peak_allocated);
    out[dev].reserved_peak_bytes = static_cast<double>(s.peak_reserved);
    // Per step: the second replay's, when there was one.
    const bool second = out[dev].two_steps && !stopped[dev] && s.out_of_memory == 0;
    out[dev].retries = second ? s.retries - first_retries[dev] : s.retries;
    out[dev].out_of_memory = stopped[dev] || s.out_of_memory > 0 ? 1 : 0;
    if (s.out_of_memory > 0) out[dev].first_out_of_memory_bytes = s.first_out_of_memory_bytes;
  }
  return out;
}

}  // namespace parasim::strat
