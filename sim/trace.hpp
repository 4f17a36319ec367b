#pragma once
// parasim::sim trace export — Chrome Trace Event JSON (object form), opened by Perfetto and
// chrome://tracing. Written after a run from the SimResult, so tracing costs nothing unless asked
// for; memory counters need EngineOptions::record_memory_timeline.
//
// Layout: pid = simulated device, tid = stream (lane); one `X` event per op (ts and dur in
// microseconds, printed to the picosecond; a collective or transfer from the moment all its
// members have arrived); `C` counter "memory" per device in GiB; `M`
// process_name / thread_name metadata; flow arrows (`s` on the sender, `f` with bp "e" on the
// receiver) for point-to-point groups. Output is byte-for-byte deterministic.
//
// A TraceFilter keeps a part of it: the devices it names (their metadata, ops, counters, and the
// arrows whose two ends are both kept) and the ops that overlap a time window [start, end]
// (an op from a to b is kept when b >= start and a <= end; times stay those of the run). A
// device's memory counter keeps the samples inside the window and the last one before it, so
// the counter starts at the level the device has at the window's start. The default filter
// keeps everything.

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "sim/engine.hpp"
#include "sim/time.hpp"
#include "sim/workload.hpp"

namespace parasim::sim {

struct TraceFilter {
  std::vector<bool> devices;  // per DeviceId: kept; empty keeps every device
  Time start = Time::zero();
  Time end = Time::max();

  bool keeps(DeviceId d) const { return devices.empty() || (d < devices.size() && devices[d]); }
  bool keeps(Time from, Time to) const { return to >= start && from <= end; }
};

struct TraceSize {
  std::size_t events = 0;  // entries of traceEvents
  std::size_t bytes = 0;   // of the whole JSON text
};

// Exactly what chrome_trace() would produce, counted without keeping it (each event is
// formatted once more, nothing is stored): for saying how large a trace is before writing it.
TraceSize chrome_trace_size(const Workload& workload, const SimResult& result,
                            const TraceFilter& filter = {});
std::string chrome_trace(const Workload& workload, const SimResult& result,
                         const TraceFilter& filter = {});
void write_chrome_trace(std::ostream& out, const Workload& workload, const SimResult& result,
                        const TraceFilter& filter = {});

}  // namespace parasim::sim
