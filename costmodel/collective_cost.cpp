#include "costmodel/collective_cost.hpp"

#include <stdexcept>
#include <string>

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
    case CollectiveAlgorithm::kDirect:
      return "direct";
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

int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

const LinkSpec& link_spec(LinkClass link, const ClusterSpec& cluster) {
  return link == LinkClass::kIntraNode ? cluster.intra_node : cluster.inter_node;
}

// The algorithm actually used (header: tree is all-reduce only, direct broadcast falls back to
// ring, send/recv is always one direct step).
Algo resolve(Kind kind, Algo algo) {
  if (kind == Kind::kSendRecv) return Algo::kDirect;
  if (algo == Algo::kTree && kind != Kind::kAllReduce) return Algo::kRing;
  if (algo == Algo::kDirect && kind == Kind::kBroadcast) return Algo::kRing;
  return algo;
}

// Latency steps of a flat collective over n ranks with a resolved algorithm.
int flat_steps(Kind kind, Algo algo, int n) {
  switch (kind) {
    case Kind::kAllReduce:
      if (algo == Algo::kTree) return 2 * ceil_log2(n);
      return algo == Algo::kDirect ? 2 : 2 * (n - 1);
    case Kind::kAllGather:
    case Kind::kReduceScatter:
    case Kind::kAllToAll:
      return algo == Algo::kDirect ? 1 : n - 1;
    case Kind::kBroadcast:
      return n - 1;
    case Kind::kSendRecv:
      return 1;
  }
  return 0;
}

// Per-rank bytes sent by a flat collective of n ranks, as a fraction of S (header table).
double flat_fraction(Kind kind, int n) {
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
  return 0.0;
}

// On a fully connected mesh a rank of an intra-node phase reaches `peers` peers, each over its
// own link: a cap of peers x peer bandwidth when that is below the GPU's bandwidth (header).
Bandwidth mesh_cap(LinkClass link, int peers, const ClusterSpec& cluster) {
  const LinkSpec& l = link_spec(link, cluster);
  if (link != LinkClass::kIntraNode || !(l.peer_bandwidth.bytes_per_s > 0)) return Bandwidth{};
  const double cap = peers * l.peer_bandwidth.bytes_per_s;
  return cap < l.bandwidth.bytes_per_s ? Bandwidth{cap} : Bandwidth{};
}

// `peers`: how many of the group's GPUs a rank exchanges with on this link in this phase.
CollectivePhase make_phase(LinkClass link, Bytes bytes, int steps, const char* what,
                           const ClusterSpec& cluster, int peers) {
  return {link, bytes, link_spec(link, cluster).latency * steps, steps, what, 1.0,
          mesh_cap(link, peers, cluster)};
}

// Two-level decomposition for g > 1 GPUs per node over N > 1 nodes (header).
void plan_hierarchical(CollectivePlan& plan, int g, int nodes, const ClusterSpec& cluster) {
  constexpr LinkClass kIntra = LinkClass::kIntraNode;
  constexpr LinkClass kInter = LinkClass::kInterNode;
  const Bytes s = plan.message;
  const Algo algo = plan.algorithm;
  // Sub-collectives other than all-reduce cannot use the tree; resolve() maps it to ring.
  const Algo sub = resolve(Kind::kReduceScatter, algo);
  const double gd = g;
  const int n = g * nodes;
  auto& ph = plan.phases;
  switch (plan.kind) {
    case Kind::kAllReduce:
      ph.push_back(make_phase(kIntra, s * flat_fraction(Kind::kReduceScatter, g),
                              flat_steps(Kind::kReduceScatter, sub, g), "intra reduce-scatter",
                              cluster, g - 1));
      ph.push_back(make_phase(kInter, s / gd * flat_fraction(Kind::kAllReduce, nodes),
                              flat_steps(Kind::kAllReduce, algo, nodes), "inter all-reduce",
                              cluster, 1));
      ph.push_back(make_phase(kIntra, s * flat_fraction(Kind::kAllGather, g),
                              flat_steps(Kind::kAllGather, sub, g), "intra all-gather", cluster, g - 1));
      return;
    case Kind::kReduceScatter:
      ph.push_back(make_phase(kIntra, s * flat_fraction(Kind::kReduceScatter, g),
                              flat_steps(Kind::kReduceScatter, sub, g), "intra reduce-scatter",
                              cluster, g - 1));
      ph.push_back(make_phase(kInter, s / gd * flat_fraction(Kind::kReduceScatter, nodes),
                              flat_steps(Kind::kReduceScatter, sub, nodes), "inter reduce-scatter",
                              cluster, 1));
      return;
    case Kind::kAllGather:
      ph.push_back(make_phase(kInter, s / gd * flat_fraction(Kind::kAllGather, nodes),
                              flat_steps(Kind::kAllGather, sub, nodes), "inter all-gather",
                              cluster, 1));
      ph.push_back(make_phase(kIntra, s * flat_fraction(Kind::kAllGather, g),
                              flat_steps(Kind::kAllGather, sub, g), "intra all-gather", cluster, g - 1));
      return;
    case Kind::kAllToAll:
      ph.push_back(make_phase(kIntra, s * ((gd - 1.0) / n), algo == Algo::kDirect ? 1 : g - 1,
                              "intra all-to-all", cluster, g - 1));
      ph.push_back(make_phase(kInter, s * flat_fraction(Kind::kAllToAll, nodes),
                              algo == Algo::kDirect ? 1 : n - g, "inter all-to-all", cluster, 1));
      return;
    case Kind::kBroadcast:
      ph.push_back(make_phase(kInter, s / gd, flat_steps(Kind::kBroadcast, algo, nodes),
                              "inter broadcast", cluster, 1));
      ph.push_back(make_phase(kIntra, s * flat_fraction(Kind::kAllGather, g),
                              flat_steps(Kind::kAllGather, Algo::kRing, g), "intra all-gather",
                              cluster, g - 1));
      return;
    case Kind::kSendRecv:
      ph.push_back(make_phase(kInter, s, 1, "inter send-recv", cluster, 1));
      return;
  }
}

}  // namespace

CollectivePlan plan_collective(CollectiveKind kind, CollectiveAlgorithm algorithm, Bytes message,
                               const GroupPlacement& group, const ClusterSpec& cluster) {
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
  CollectivePlan plan{kind, resolve(kind, algorithm), message, {}};
  const int n = group.size;
  if (n == 1) return plan;
  if (g > 1 && nodes > 1) {
    plan_hierarchical(plan, g, nodes, cluster);
    return plan;
  }
  const LinkClass link = nodes == 1 ? LinkClass::kIntraNode : LinkClass::kInterNode;
  // Send/recv reaches one peer (its ring successor); a collective all n - 1 (NCCL and RCCL
  // spread their channels over every link of a mesh).
  plan.phases.push_back(make_phase(link, message * flat_fraction(kind, n),
                                   flat_steps(kind, plan.algorithm, n), collective_name(kind),
                                   cluster, kind == Kind::kSendRecv ? 1 : n - 1));
  return plan;
}

sim::Time estimate_time(const CollectivePlan& plan, const ClusterSpec& cluster) {
  sim::Time total;
  for (const auto& phase : plan.phases) {
    total += phase.latency;
    if (phase.bytes_sent_per_rank.value <= 0) continue;
    const Bandwidth bw = link_spec(phase.link, cluster).bandwidth;
    if (!(bw.bytes_per_s > 0)) {
      throw std::invalid_argument(std::string(collective_name(plan.kind)) + ": " +
                                  link_name(phase.link) + " bandwidth must be positive");
    }
    if (!(phase.link_efficiency > 0)) {
      throw std::invalid_argument(std::string(collective_name(plan.kind)) + ": " + phase.what +
                                  ": link efficiency must be positive");
    }
    // bw x 1.0 is bw exactly, so analytical plans cost what they always did.
    Bandwidth rate = bw * phase.link_efficiency;
    if (phase.rate_cap.bytes_per_s > 0 && phase.rate_cap.bytes_per_s < rate.bytes_per_s) {
      rate = phase.rate_cap;
    }
    total += phase.bytes_sent_per_rank / rate;
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
  return flat_fraction(kind, n);
}

Bandwidth algbw(Bytes message, sim::Time t) {
  if (t <= sim::Time::zero()) throw std::invalid_argument("algbw: time must be positive");
  return {message.value / t.to_seconds()};
}

Bandwidth busbw(CollectiveKind kind, int n, Bytes message, sim::Time t) {
  return algbw(message, t) * busbw_factor(kind, n);
}

}  // namespace parasim::cost
