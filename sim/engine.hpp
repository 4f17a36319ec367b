#pragma once
// parasim::sim::Engine — runs a Workload as a discrete-event simulation.
//
// An Engine is a plain value: it holds no globals, so a planner may run many engines at once on
// different threads, each over its own (or a shared, read-only) Workload.
//
// Determinism: events are ordered by (time, priority, insertion sequence), and every container is
// iterated in index order, so the same Workload gives the same SimResult bit for bit.
//
// Host issue (Workload::set_issue): a GPU op waiting for its issue costs one extra event; a
// workload without host issue takes none of its paths and runs exactly as before.

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "sim/task_graph.hpp"
#include "sim/time.hpp"
#include "sim/workload.hpp"

namespace parasim::sim {

// A workload that cannot run: a dependency cycle, or ops left waiting when events ran out.
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct EngineOptions {
  bool check_graph = true;             // Boost.Graph topological check before running
  bool record_memory_timeline = false; // memory counter samples for the trace (off: free)
  // The order in which ops' memory deltas were applied (SimResult::memory_log), for replaying
  // them through an allocator model (report/allocator_replay.hpp); 8 bytes per delta-bearing op
  // start or end.
  bool record_memory_log = true;
};

// One application of an op's memory deltas: at its start (its MemoryDelta::at_start values) or
// its end (at_end).
struct MemoryEvent {
  OpId op = kNone;
  bool at_start = true;
};

struct MemorySample {
  Time time;
  DeviceId device;
  std::int64_t total_bytes;  // device total after the change
};

struct SimResult {
  Time makespan;                       // end of the last op
  std::vector<Time> op_start;          // per op
  std::vector<Time> op_end;            // per op
  std::vector<std::int64_t> peak_memory_bytes;  // per device
  // Per device, bytes per memory category at the moment of its peak.
  std::vector<std::array<std::int64_t, kMaxMemoryCategories>> peak_breakdown_bytes;
  std::vector<MemorySample> memory_timeline;    // only with record_memory_timeline
  std::vector<MemoryEvent> memory_log;          // only with record_memory_log, in applied order
  // First op to last op, along what delayed each op: the op whose end (or, for a waiting group
  // member, whose arrival) let it start; for a GPU op, its host op when the issue held back its
  // start, or its end (the last kernel issued late).
  std::vector<OpId> critical_path;
  std::vector<double> link_bytes;      // bytes carried per link
  std::uint64_t events_processed = 0;
};

// When each group really started: its last member's arrival (members keep their own arrival as
// op_start, which includes waiting at the stream head for the others).
std::vector<Time> group_start_times(const Workload& workload, const SimResult& result);

class Engine {
 public:
  explicit Engine(const Workload& workload, EngineOptions options = {});
  SimResult run();

 private:
  const Workload& workload_;
  EngineOptions options_;
};

}  // namespace parasim::sim
