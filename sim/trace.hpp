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

#include <ostream>

#include "sim/engine.hpp"
#include "sim/workload.hpp"

namespace parasim::sim {

void write_chrome_trace(std::ostream& out, const Workload& workload, const SimResult& result);

}  // namespace parasim::sim
