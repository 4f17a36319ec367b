#include "costmodel/collective_cost.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "costmodel/fat_tree.hpp"
#include "costmodel/nccl_model.hpp"

namespace parasim::cost {

const char* collective_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kAllGather:
      return "all-gather";
    case CollectiveKind::kReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::kBroadcast:
      return "broadcast";
    case CollectiveKind::kAllToAll:
      return "all-to-all";
    case CollectiveKind::kSendRecv:
      return "send-recv";
  }
  return "?";
}

std::optional<CollectiveKind> parse_collective_kind(std::string_view name) {
  for (CollectiveKind k :
       {CollectiveKind::kAllReduce, CollectiveKind::kAllGather, CollectiveKind::kReduceScatter,
        CollectiveKind::kBroadcast, CollectiveKind::kAllToAll, CollectiveKind::kSendRecv}) {
    if (name == collective_name(k)) return k;
  }
  return std::nullopt;
}

const char* algorithm_name(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::kRing:
      return "ring";
    case CollectiveAlgorithm::kTree:
      return "tree";
    case CollectiveAlgorithm::kNvls:
      return "nvls";
    case CollectiveAlgorithm::kDirect:
      return "direct";
  }
  return "?";
}

const char* protocol_name(CollectiveProtocol protocol) {
  switch (protocol) {
    case CollectiveProtocol::kLL:
      return "LL";
    case CollectiveProtocol::kLL128:
      return "LL128";
    case CollectiveProtocol::kSimple:
      return "Simple";
  }
  return "?";
}

const char* link_name(LinkClass link) {
  switch (link) {
    case LinkClass::kIntraNode:
      return "intra-node";
    case LinkClass::kInterNode:
      return "inter-node";
  }
  return "?";
}

namespace {

using Kind = CollectiveKind;
using Algo = CollectiveAlgorithm;

const LinkSpec& link_spec(LinkClass link, const ClusterSpec& cluster) {
  return link == LinkClass::kIntraNode ? cluster.intra_node : cluster.inter_node;
}

double fabric_efficiency(LinkClass link, const ClusterSpec& cluster) {
  return link == LinkClass::kIntraNode ? cluster.fabric.intra_node_efficiency
                                       : cluster.fabric.inter_node_efficiency;
}

// On a fully connected mesh a rank of an intra-node phase reaches `peers` peers, each over its
// own link: a cap of peers x peer bandwidth when that is below the GPU's bandwidth (header), as
// a rate of delivered bytes (x the phase's efficiency).
Bandwidth mesh_cap(LinkClass link, int peers, double efficiency, const ClusterSpec& cluster) {
  const LinkSpec& l = link_spec(link, cluster);
  if (link != LinkClass::kIntraNode || !(l.peer_bandwidth.bytes_per_s > 0)) return Bandwidth{};
  const double cap = peers * l.peer_bandwidth.bytes_per_s;
  return cap < l.bandwidth.bytes_per_s ? Bandwidth{cap * efficiency} : Bandwidth{};
}

// All-to-all (kDirect or kRing) and send/recv (header).
void plan_point_to_point(CollectivePlan& plan, int g, int nodes, const ClusterSpec& cluster) {
  const Bytes s = plan.message;
  const int n = g * nodes;
  const double nd = n;
  const bool direct = plan.algorithm == Algo::kDirect;
  auto& ph = plan.phases;
  if (plan.kind == Kind::kSendRecv) {
    // Send/recv reaches one peer (its ring successor).
    const LinkClass link = nodes == 1 ? LinkClass::kIntraNode : LinkClass::kInterNode;
    ph.push_back(point_to_point_phase(link, s, 1, nodes == 1 ? "send-recv" : "inter send-recv", cluster, 1));
    return;
  }
  if (nodes == 1 || g == 1) {
    // A collective reaches all n - 1 peers (NCCL and RCCL spread their channels over every link
    // of a mesh).
    const LinkClass link = nodes == 1 ? LinkClass::kIntraNode : LinkClass::kInterNode;
    ph.push_back(point_to_point_phase(link, s * ((nd - 1.0) / nd), direct ? 1 : n - 1, "all-to-all",
                            cluster, n - 1));
    return;
  }
  const double gd = g;
  ph.push_back(point_to_point_phase(LinkClass::kIntraNode, s * ((gd - 1.0) / nd), direct ? 1 : g - 1,
                          "intra all-to-all", cluster, g - 1));
  ph.push_back(point_to_point_phase(LinkClass::kInterNode, s * ((nodes - 1.0) / nodes), direct ? 1 : n - g,
                          "inter all-to-all", cluster, 1));
}

void check_placement(Kind kind, Bytes message, const GroupPlacement& group) {
  const int g = group.gpus_per_node_in_group;
  const int nodes = group.nodes_spanned;
  if (group.size < 1 || g < 1 || nodes < 1 || group.size != g * nodes) {
    throw std::invalid_argument("collective group placement: size " + std::to_string(group.size) +
                                " must equal " + std::to_string(g) + " GPUs per node x " +
                                std::to_string(nodes) + " nodes, all >= 1");
  }
  if (!(message.value >= 0)) {
    throw std::invalid_argument(std::string(collective_name(kind)) + ": negative message size");
  }
}

CollectivePlan plan_unspined(CollectiveKind kind, const CollectiveAlgorithm* algorithm,
                             Bytes message, const GroupPlacement& group,
                             const ClusterSpec& cluster) {
  check_placement(kind, message, group);
  if (nccl_models(kind)) {
    if (group.size == 1) return CollectivePlan{kind, Algo::kRing, CollectiveProtocol::kSimple, message, {}};
    return nccl_plan(kind, message, group, cluster,
                     nccl_choice(kind, message, group, cluster, algorithm));
  }
  Algo algo = Algo::kDirect;
  if (kind == Kind::kAllToAll && algorithm != nullptr && *algorithm == Algo::kRing) algo = Algo::kRing;
  CollectivePlan p{kind, algo, CollectiveProtocol::kSimple, message, {}};
  if (group.size == 1) return p;
  plan_point_to_point(p, group.gpus_per_node_in_group, group.nodes_spanned, cluster);
  return p;
}

// NCCL chooses without knowing the spine (its tuning model has no such input); the chosen plan's
// inter-node phases then pay it (fat_tree.hpp).
CollectivePlan plan(CollectiveKind kind, const CollectiveAlgorithm* algorithm, Bytes message,
                    const GroupPlacement& group, const ClusterSpec& cluster) {
  CollectivePlan p = plan_unspined(kind, algorithm, message, group, cluster);
  apply_spine(p, spine_pattern(p), group.nodes_spanned, cluster);
  return p;
}

}  // namespace

CollectivePhase point_to_point_phase(LinkClass link, Bytes bytes, int steps, const char* what,
                           const ClusterSpec& cluster, int peers) {
  const double e = fabric_efficiency(link, cluster);
  CollectivePhase ph;
  ph.link = link;
  ph.bytes_sent_per_rank = bytes;
  ph.latency = link_spec(link, cluster).latency * steps;
  ph.steps = steps;
  ph.what = what;
  ph.link_efficiency = e;
  ph.rate_cap = mesh_cap(link, peers, e, cluster);
  return ph;
}

CollectivePlan plan_collective(CollectiveKind kind, Bytes message, const GroupPlacement& group,
                               const ClusterSpec& cluster) {
  return plan(kind, nullptr, message, group, cluster);
}

CollectivePlan plan_collective(CollectiveKind kind, CollectiveAlgorithm algorithm, Bytes message,
                               const GroupPlacement& group, const ClusterSpec& cluster) {
  return plan(kind, &algorithm, message, group, cluster);
}

sim::Time estimate_time(const CollectivePlan& plan, const ClusterSpec& cluster) {
  sim::Time total;
  sim::Time step_bandwidth;  // the slowest bandwidth term of the current step
  for (std::size_t i = 0; i < plan.phases.size(); ++i) {
    const CollectivePhase& phase = plan.phases[i];
    total += phase.latency;
    if (phase.bytes_sent_per_rank.value > 0) {
      const Bandwidth bw = link_spec(phase.link, cluster).bandwidth;
      if (!(bw.bytes_per_s > 0)) {
        throw std::invalid_argument(std::string(collective_name(plan.kind)) + ": " +
                                    link_name(phase.link) + " bandwidth must be positive");
      }
      if (!(phase.link_efficiency > 0)) {
        throw std::invalid_argument(std::string(collective_name(plan.kind)) + ": " + phase.what +
                                    ": link efficiency must be positive");
      }
      Bandwidth rate = bw * phase.link_efficiency;
      if (phase.rate_cap.bytes_per_s > 0 && phase.rate_cap.bytes_per_s < rate.bytes_per_s) {
        rate = phase.rate_cap;
      }
      step_bandwidth = std::max(step_bandwidth, phase.bytes_sent_per_rank / rate);
    }
    if (!phase.concurrent_with_next || i + 1 == plan.phases.size()) {
      total += step_bandwidth;
      step_bandwidth = sim::Time::zero();
    }
  }
  return total;
}

Bytes bytes_sent_per_rank(const CollectivePlan& plan, LinkClass link) {
  Bytes total;
  for (const auto& phase : plan.phases) {
    if (phase.link == link) total += phase.bytes_sent_per_rank;
  }
  return total;
}

Bytes bytes_sent_per_rank(const CollectivePlan& plan) {
  Bytes total;
  for (const auto& phase : plan.phases) total += phase.bytes_sent_per_rank;
  return total;
}

double busbw_factor(CollectiveKind kind, int n) {
  if (n < 1) throw std::invalid_argument("busbw_factor: group size must be >= 1");
  const double nd = n;
  switch (kind) {
    case Kind::kAllReduce:
      return 2.0 * (nd - 1.0) / nd;
    case Kind::kAllGather:
    case Kind::kReduceScatter:
    case Kind::kAllToAll:
      return (nd - 1.0) / nd;
    case Kind::kBroadcast:
    case Kind::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

Bandwidth algbw(Bytes message, sim::Time t) {
  if (t <= sim::Time::zero()) throw std::invalid_argument("algbw: time must be positive");
  return {message.value / t.to_seconds()};
}

Bandwidth busbw(CollectiveKind kind, int n, Bytes message, sim::Time t) {
  return algbw(message, t) * busbw_factor(kind, n);
}

}  // namespace parasim::cost
