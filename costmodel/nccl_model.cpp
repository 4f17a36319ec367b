#include "costmodel/nccl_model.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "costmodel/nccl_tuning.hpp"

namespace parasim::cost {
namespace {

using Algo = CollectiveAlgorithm;
using Proto = CollectiveProtocol;
using Kind = CollectiveKind;

constexpr double kGiga = 1e9;
constexpr Proto kProtocols[] = {Proto::kLL, Proto::kLL128, Proto::kSimple};
// The node size the fabric's NVLS busbw was measured on (collective_fabric.hpp).
constexpr double kNvlsMeasuredNode = 8.0;

int proto_index(Proto p) {
  return p == Proto::kLL ? nccl::kLL : p == Proto::kLL128 ? nccl::kLL128 : nccl::kSimple;
}

// floor(log2(x)) for x >= 1; -1 for x == 0 (NCCL's log2i / log2Down).
int log2_floor(unsigned long long x) {
  int k = -1;
  while (x != 0) {
    x >>= 1;
    ++k;
  }
  return k;
}

// What the group's links give NCCL's model (header): achieved rates, B, channels.
struct GroupLinks {
  int n = 1, g = 1, nodes = 1;
  double intra_raw = 0;  // bytes/s: NVLink, capped by a mesh's peer links
  double inter_raw = 0;  // bytes/s: the NIC
  double intra_share = 0, inter_share = 0;  // fabric efficiencies
  double bus = 0;        // B, bytes/s
  int channels = 1;      // the search's channels
  int arch_row = 1, node_column = 0;
};

GroupLinks group_links(Kind kind, const GroupPlacement& p, const ClusterSpec& c) {
  GroupLinks l;
  l.n = p.size;
  l.g = p.gpus_per_node_in_group;
  l.nodes = p.nodes_spanned;
  const CollectiveFabric& f = c.fabric;
  l.intra_share = f.intra_node_efficiency;
  l.inter_share = f.inter_node_efficiency;
  l.intra_raw = c.intra_node.bandwidth.bytes_per_s;
  const double peer = c.intra_node.peer_bandwidth.bytes_per_s;
  if (peer > 0 && l.g > 1) l.intra_raw = std::min(l.intra_raw, (l.g - 1) * peer);
  l.inter_raw = c.inter_node.bandwidth.bytes_per_s;
  const bool uses_intra = l.g > 1;
  const bool uses_inter = l.nodes > 1;
  auto refuse = [&](const char* link) {
    throw std::invalid_argument(std::string(collective_name(kind)) + ": " + link +
                                " bandwidth must be positive");
  };
  if (uses_intra && !(l.intra_raw > 0)) refuse("intra-node");
  if (uses_inter && !(l.inter_raw > 0)) refuse("inter-node");
  const double intra = l.intra_share * l.intra_raw;
  const double inter = l.inter_share * l.inter_raw;
  if (l.nodes == 1) {
    l.bus = intra;
  } else {
    l.bus = l.g * inter;
    if (l.g > 1) l.bus = std::min(l.bus, l.g / (l.g - 1.0) * intra);
  }
  l.channels = l.nodes == 1 ? f.intra_node_channels : l.g;
  l.arch_row = static_cast<int>(f.arch);
  l.node_column = l.nodes <= 2 ? l.nodes - 1 : 2;
  return l;
}

// Ring steps (tuning.cc:163-165) and the ring's busBw-to-algorithm ratio n / nsteps.
int ring_steps(Kind kind, int n) {
  if (kind == Kind::kAllReduce) return 2 * (n - 1);
  if (kind == Kind::kBroadcast) return n;
  return n - 1;
}

// Per-rank volume of a ring as a fraction of S (header).
double ring_volume(Kind kind, int n) {
  return kind == Kind::kBroadcast ? 1.0 : busbw_factor(kind, n);
}

double ring_latency(Kind kind, int p, const GroupLinks& l, const ClusterSpec& c, double s) {
  const CollectiveFabric& f = c.fabric;
  const double plugin = f.net_plugin_latency.to_us() * (p == nccl::kSimple ? 2.0 : 1.0);
  double lat = nccl::kBaseLatencyRing[p];
  if (kind == Kind::kBroadcast) {
    return lat + (l.nodes == 1 ? nccl::kNvlinkHopRing[p] : nccl::kNetHopRing[p]);
  }
  double intra = nccl::kNvlinkHopRing[p];
  const double inter = (l.g == 1 ? nccl::kNetHopTree[p] : nccl::kNetHopRing[p]) + plugin;
  if (l.nodes > 1) {
    double overhead = f.cpu == HostCpuVendor::kAmd ? nccl::kNetOverheadAmd : nccl::kNetOverheadIntel;
    if (p == nccl::kSimple) overhead *= nccl::kNetOverheadSimpleFactor;
    intra = std::max(intra, overhead);
  }
  const int nsteps = ring_steps(kind, l.n);
  const int inter_steps =
      l.nodes == 1 ? 0 : (kind == Kind::kAllReduce ? 2 * (l.nodes - 1) : l.nodes - 1);
  lat += (nsteps - inter_steps) * intra + inter_steps * inter;
  const int runtime_channels = std::min(nccl::kMaxChannels, 2 * l.channels);
  if (kind == Kind::kAllReduce && p == nccl::kSimple && l.nodes > 1 &&
      s / (static_cast<double>(runtime_channels) * l.n) >= nccl::kRingPlateauBytes) {
    lat *= f.arch == NcclGpuArch::kVolta ? nccl::kRingPlateauFactorVolta : nccl::kRingPlateauFactor;
  }
  return lat;
}

double tree_latency(int p, const GroupLinks& l, const ClusterSpec& c) {
  const double plugin = c.fabric.net_plugin_latency.to_us() * (p == nccl::kSimple ? 2.0 : 1.0);
  const double inter = nccl::kNetHopTree[p] + plugin;
  return nccl::kBaseLatencyTree[p] +
         2.0 * ((l.g - 1) * nccl::kNvlinkHopTree[p] + log2_floor(static_cast<unsigned>(l.nodes)) * inter);
}

double ll_max(const GroupLinks& l, const ClusterSpec& c) {
  const int row = l.nodes == 1 ? l.arch_row : (c.fabric.cpu == HostCpuVendor::kAmd ? 1 : 0);
  return nccl::kLlMaxBw[row][l.node_column] * kGiga;
}

// NCCL's busBw of a candidate, bytes/s (tuning.cc:187-191, header).
double ring_bus(int p, const GroupLinks& l, const ClusterSpec& c) {
  const double b = l.bus;
  if (p == nccl::kLL) return std::min(ll_max(l, c), b * nccl::kRingLLFactor);
  if (p == nccl::kLL128) {
    return std::min(b * nccl::kRingLL128Factor,
                    l.channels * nccl::kPerChannelMaxRingLL128Bw[l.arch_row][l.node_column] * kGiga);
  }
  return b;
}

double tree_bus(int p, const GroupLinks& l, const ClusterSpec& c, double s) {
  double x = std::min(l.bus * nccl::kTreeFactor,
                      l.channels * nccl::kPerChannelMaxTreeBw[l.arch_row][l.node_column] * kGiga);
  if (p == nccl::kLL) x = std::min(x / nccl::kTreeLLDivisor, ll_max(l, c));
  if (p == nccl::kLL128) {
    x = std::min(x * (l.nodes == 1 ? nccl::kTreeLL128FactorOneNode : nccl::kTreeLL128FactorNodes),
                 l.channels * nccl::kPerChannelMaxTreeLL128Bw[l.arch_row][l.node_column] * kGiga);
  }
  const int log_size = log2_floor(static_cast<unsigned long long>(s) >> 6);
  if (log_size >= 0 && log_size < 23) x *= nccl::kTreeCorrection[p][log_size];
  return x;
}

double nvls_efficiency(const ClusterSpec& c) {
  return c.fabric.nvls_allreduce_busbw_share * (kNvlsMeasuredNode + 1.0) /
         (2.0 * (kNvlsMeasuredNode - 1.0));
}

void check(Kind kind, Bytes message, const GroupPlacement& group) {
  if (!nccl_models(kind)) {
    throw std::invalid_argument(std::string("the NCCL model does not cover ") +
                                collective_name(kind));
  }
  const int g = group.gpus_per_node_in_group, nodes = group.nodes_spanned;
  if (group.size < 1 || g < 1 || nodes < 1 || group.size != g * nodes) {
    throw std::invalid_argument("collective group placement: size " + std::to_string(group.size) +
                                " must equal " + std::to_string(g) + " GPUs per node x " +
                                std::to_string(nodes) + " nodes, all >= 1");
  }
  if (!(message.value >= 0)) {
    throw std::invalid_argument(std::string(collective_name(kind)) + ": negative message size");
  }
}

}  // namespace

bool nccl_models(CollectiveKind kind) {
  return kind == Kind::kAllReduce || kind == Kind::kAllGather || kind == Kind::kReduceScatter ||
         kind == Kind::kBroadcast;
}

std::vector<NcclCandidate> nccl_candidates(CollectiveKind kind, Bytes message,
                                           const GroupPlacement& group,
                                           const ClusterSpec& cluster) {
  check(kind, message, group);
  std::vector<NcclCandidate> out;
  if (group.size == 1) return out;
  const GroupLinks l = group_links(kind, group, cluster);
  const CollectiveFabric& f = cluster.fabric;
  const double s = message.value;
  auto add = [&](Algo a, Proto p, double latency_us, double bus, double algorithm_bw) {
    NcclCandidate c{a, p, latency_us, bus, algorithm_bw, 0.0};
    c.time_s = latency_us * 1e-6 + (s > 0 ? s / algorithm_bw : 0.0);
    out.push_back(c);
  };
  const bool all_reduce = kind == Kind::kAllReduce;
  if (all_reduce) {
    for (Proto p : kProtocols) {
      if (p == Proto::kLL128 && !f.ll128) continue;
      const int pi = proto_index(p);
      const double bus = tree_bus(pi, l, cluster, s);
      add(Algo::kTree, p, tree_latency(pi, l, cluster), bus, bus * nccl::kTreeAlgorithmRatio);
    }
  }
  for (Proto p : kProtocols) {
    if (p == Proto::kLL128 && !f.ll128) continue;
    const int pi = proto_index(p);
    const double bus = ring_bus(pi, l, cluster);
    add(Algo::kRing, p, ring_latency(kind, pi, l, cluster, s), bus,
        bus * l.n / ring_steps(kind, l.n));
  }
  const bool mesh = cluster.intra_node.peer_bandwidth.bytes_per_s > 0;
  if (all_reduce && f.nvls && l.nodes == 1 && !mesh && f.nvls_allreduce_busbw_share > 0) {
    const double algorithm_bw = nvls_efficiency(cluster) * l.intra_raw * l.g / (l.g + 1.0);
    add(Algo::kNvls, Proto::kSimple, nccl::kBaseLatencyNvls + nccl::kNvlinkHopNvls,
        algorithm_bw * busbw_factor(kind, l.n), algorithm_bw);
  }
  return out;
}

NcclCandidate nccl_choice(CollectiveKind kind, Bytes message, const GroupPlacement& group,
                          const ClusterSpec& cluster, const CollectiveAlgorithm* algorithm) {
  const std::vector<NcclCandidate> all = nccl_candidates(kind, message, group, cluster);
  if (all.empty()) throw std::invalid_argument("nccl_choice: a group of one runs nothing");
  const bool runs = algorithm != nullptr &&
                    std::any_of(all.begin(), all.end(),
                                [&](const NcclCandidate& c) { return c.algorithm == *algorithm; });
  const NcclCandidate* best = nullptr;
  for (const NcclCandidate& c : all) {
    if (runs && c.algorithm != *algorithm) continue;
    if (best == nullptr || c.time_s < best->time_s) best = &c;  // strict: the first on a tie
  }
  return *best;
}

CollectivePlan nccl_plan(CollectiveKind kind, Bytes message, const GroupPlacement& group,
                         const ClusterSpec& cluster, const NcclCandidate& chosen) {
  check(kind, message, group);
  CollectivePlan plan{kind, chosen.algorithm, chosen.protocol, message, {}};
  if (group.size == 1) return plan;
  const GroupLinks l = group_links(kind, group, cluster);
  const double s = message.value;
  const double bandwidth_s = s > 0 ? s / chosen.algorithm_bandwidth : 0.0;
  // Bytes per rank on NVLink and on the NIC (header).
  double intra = 0, inter = 0;
  int steps = 0;
  switch (chosen.algorithm) {
    case Algo::kTree:
      intra = 2.0 * s * (l.g - 1) / l.g;
      inter = l.nodes > 1 ? 2.0 * s / l.g : 0.0;
      steps = 2 * ((l.g - 1) + log2_floor(static_cast<unsigned>(l.nodes)));
      break;
    case Algo::kNvls:
      intra = s * (l.g + 1.0) / l.g;
      steps = 1;
      break;
    default: {
      const double volume = s * ring_volume(kind, l.n);
      inter = l.nodes > 1 ? volume / l.g : 0.0;
      intra = volume - inter;
      steps = ring_steps(kind, l.n);
      break;
    }
  }
  const double wire = nccl::kWireDataShare[proto_index(chosen.protocol)];
  auto add_phase = [&](LinkClass link, double bytes, const char* what) {
    const bool is_inter = link == LinkClass::kInterNode;
    const double raw = is_inter ? l.inter_raw : l.intra_raw;
    double efficiency = chosen.algorithm == Algo::kNvls
                            ? nvls_efficiency(cluster)
                            : (is_inter ? l.inter_share : l.intra_share) * wire;
    Bandwidth cap{};
    if (bytes > 0 && bandwidth_s > 0) {
      cap = Bandwidth{bytes / bandwidth_s};
      // Never let the link itself be slower than NCCL's bandwidth term (the factors above keep
      // it so; this guards a fabric whose figures break that).
      efficiency = std::max(efficiency, cap.bytes_per_s / raw);
    }
    CollectivePhase ph;
    ph.link = link;
    ph.bytes_sent_per_rank = Bytes{bytes};
    ph.steps = plan.phases.empty() ? steps : 0;
    ph.latency = plan.phases.empty() ? sim::Time::us(chosen.latency_us) : sim::Time::zero();
    ph.what = what;
    ph.link_efficiency = efficiency;
    ph.rate_cap = cap;
    plan.phases.push_back(ph);
  };
  if (l.nodes > 1) {
    add_phase(LinkClass::kInterNode, inter, "inter-node part");
    if (l.g > 1) {
      plan.phases.back().concurrent_with_next = true;
      add_phase(LinkClass::kIntraNode, intra, "intra-node part");
    }
  } else {
    add_phase(LinkClass::kIntraNode, intra, collective_name(kind));
  }
  return plan;
}

}  // namespace parasim::cost
