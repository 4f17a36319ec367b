#include "sim/task_graph.hpp"

#include <algorithm>
#include <boost/graph/compressed_sparse_row_graph.hpp>
#include <boost/graph/strong_components.hpp>
#include <boost/graph/topological_sort.hpp>
#include <iterator>

namespace parasim::sim {
namespace {

using Graph = boost::compressed_sparse_row_graph<boost::directedS>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

struct VertexMap {
  std::vector<std::uint32_t> of_op;     // op -> vertex
  std::vector<OpId> representative;     // vertex -> an op standing for it
};

VertexMap map_vertices(const Workload& w) {
  VertexMap m;
  m.of_op.resize(w.op_count());
  std::vector<std::uint32_t> of_group(w.group_count(), kNone);
  for (OpId o = 0; o < w.op_count(); ++o) {
    const Op& op = w.op(o);
    if (op.kind == OpKind::kGroupMember) {
      auto& v = of_group[op.group];
      if (v == kNone) {
        v = static_cast<std::uint32_t>(m.representative.size());
        m.representative.push_back(o);
      }
      m.of_op[o] = v;
    } else {
      m.of_op[o] = static_cast<std::uint32_t>(m.representative.size());
      m.representative.push_back(o);
    }
  }
  return m;
}

// One cycle inside a strongly connected component: walk edges that stay inside it until a
// vertex repeats.
std::vector<Vertex> cycle_in_component(const Graph& g, const std::vector<int>& component,
                                       Vertex start) {
  std::vector<Vertex> path;
  std::vector<int> seen_at(num_vertices(g), -1);
  Vertex v = start;
  while (seen_at[v] < 0) {
    seen_at[v] = static_cast<int>(path.size());
    path.push_back(v);
    Vertex next = v;
    for (auto [e, end] = out_edges(v, g); e != end; ++e) {
      Vertex t = target(*e, g);
      if (component[t] == component[start]) {
        next = t;
        break;
      }
    }
    v = next;
  }
  return {path.begin() + seen_at[v], path.end()};
}

}  // namespace

GraphCheck check_task_graph(const Workload& w) {
  VertexMap m = map_vertices(w);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> edges;
  edges.reserve(w.dependencies().size() + w.op_count() + w.issues().size());
  for (auto [before, after] : w.dependencies()) {
    edges.emplace_back(m.of_op[before], m.of_op[after]);
  }
  // A GPU op starts only once the host op that issues it has started (Workload::set_issue): a
  // path from the GPU op back to its host op is a deadlock.
  for (const IssueSpec& is : w.issues()) edges.emplace_back(m.of_op[is.host], m.of_op[is.op]);
  // Order inside each queue of a stream (the order across queues is decided at run time).
  for (StreamId s = 0; s < w.stream_count(); ++s) {
    for (const auto& queue : w.stream(s).queues) {
      for (std::size_t i = 1; i < queue.size(); ++i) {
        edges.emplace_back(m.of_op[queue[i - 1]], m.of_op[queue[i]]);
      }
    }
  }
  const std::size_t n = m.representative.size();
  GraphCheck result;
  result.vertex_count = n;
  result.edge_count = edges.size();

  Graph g(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), n);
  // Self-loops (an op waiting on itself, or two members of one group on one stream) are cycles
  // of length one; the component search below does not flag them.
  for (auto [a, b] : edges) {
    if (a == b) {
      result.acyclic = false;
      result.cycle = {m.representative[a]};
      result.message = "dependency cycle: " + w.op_name(m.representative[a]) + " waits for itself";
      return result;
    }
  }
  try {
    std::vector<Vertex> order;
    order.reserve(n);
    boost::topological_sort(g, std::back_inserter(order));
    return result;
  } catch (const boost::not_a_dag&) {
  }
  std::vector<int> component(n);
  boost::strong_components(g, boost::make_iterator_property_map(
                                  component.begin(), get(boost::vertex_index, g)));
  std::vector<int> size(n, 0);
  for (int c : component) ++size[static_cast<std::size_t>(c)];
  Vertex start = 0;
  for (Vertex v = 0; v < n; ++v) {
    if (size[static_cast<std::size_t>(component[v])] > 1) {
      start = v;
      break;
    }
  }
  auto cycle = cycle_in_component(g, component, start);
  result.acyclic = false;
  result.message = "dependency cycle: ";
  for (Vertex v : cycle) {
    result.cycle.push_back(m.representative[v]);
    result.message += w.op_name(m.representative[v]) + " -> ";
  }
  result.message += w.op_name(m.representative[cycle.front()]);
  return result;
}

}  // namespace parasim::sim
