#pragma once
// parasim::sim task graph check — a Workload's ops as a Boost.Graph DAG.
//
// Vertices: one per compute op and one per group (all members of a group are one vertex, since
// they start and end together). Edges: explicit dependencies, the order inside each stream
// queue, and host op -> each GPU op it issues (Workload::set_issue). (A priority choice between queues can still deadlock a stream whose queues wait on each
// other through a busy stream; the engine reports such a deadlock with the stream heads.)
// A workload is runnable only if this graph is acyclic; otherwise the engine would deadlock.

#include <string>
#include <vector>

#include "sim/workload.hpp"

namespace parasim::sim {

struct GraphCheck {
  bool acyclic = true;
  std::vector<OpId> cycle;   // ops along one cycle, in dependency order (empty when acyclic)
  std::string message;       // "dependency cycle: a -> b -> c -> a" (empty when acyclic)
  std::size_t vertex_count = 0;
  std::size_t edge_count = 0;
};

GraphCheck check_task_graph(const Workload& workload);

}  // namespace parasim::sim
