#pragma once
// parasim::cost collective cost — how a collective over a group of GPUs turns into link traffic.
//
// A collective is planned into phases (CollectivePlan). Contract with the simulator:
//   * The phases run one after another, in order; phase k+1 starts when every rank has finished
//     phase k. Exception: a phase with `concurrent_with_next` and the phase after it form one
//     step (a run of such phases likewise): the step waits the sum of their latencies, then all
//     their flows start at once, and it ends when the last of them ends (a ring over nodes moves
//     its NVLink and NIC parts at the same time, nccl_model.hpp).
//   * In a phase, EVERY rank of the group sends `bytes_sent_per_rank` over its own link of class
//     `link` (its NVLink port for kIntraNode, its NIC for kInterNode; both are per GPU and per
//     direction, see hardware.hpp). The simulator turns each phase into one flow per rank on that
//     rank's link resource and adds `latency` once per step. On a fully connected mesh (below) an
//     intra-node send/recv flow crosses the sender's port and the pair's own link (capacity
//     rate_cap / link_efficiency) instead of the receiver's port; every other capped flow carries
//     rate_cap as its own limit on delivered bytes.
//   * A phase achieves `link_efficiency` x the link bandwidth when uncontended (the share of the
//     link NCCL reaches with the plan's protocol; a calibrated plan, measured_collectives.hpp,
//     sets it so that the plan reproduces a measured time, and clears rate_cap). The simulator
//     pushes bytes_sent_per_rank / link_efficiency through the link; bytes_sent_per_rank stays the
//     true traffic, for reports.
//   * Uncontended, the simulated time therefore equals estimate_time(): the sum over steps of
//     their latencies + the largest over their phases of bytes_sent_per_rank /
//     min(link_efficiency x bandwidth(link), rate_cap).
//   * A group of size 1 has no phases: it is free.
//
// Message size S follows nccl-tests (NVIDIA/nccl-tests doc/PERFORMANCE.md): S is the bytes per rank for
// all-reduce, broadcast and send/recv, and the total gathered size (count x type size x n) for
// all-gather, reduce-scatter and all-to-all.
//
// Who plans what:
//   * all-reduce, all-gather, reduce-scatter, broadcast: NCCL's algorithm and protocol choice
//     and cost (nccl_model.hpp): ring, tree (all-reduce), NVLS (all-reduce inside an NVLink SHARP
//     node) x LL, LL128, Simple; the plan reproduces NCCL's time for the chosen pair uncontended.
//   * all-to-all and send/recv, which NCCL's tuning model does not cover (NCCL runs them as
//     grouped point-to-point sends), are planned here with the link's per-hop latency
//     (hardware.hpp LinkSpec::latency) and the fabric's achieved share of the link as
//     link_efficiency (collective_fabric.hpp), Simple protocol:
//       all-to-all  kDirect (the default: every rank posts its n-1 sends at once, one step) or
//                   kRing (pairwise exchange, n-1 steps); per rank (n-1)/n * S. On g > 1 GPUs
//                   per node over N > 1 nodes: intra exchange with the g-1 node peers, (g-1)/n
//                   * S, then inter exchange with the n-g remote ranks, (N-1)/N * S, one after
//                   the other (real all-to-all runs both at once; serialising is an upper bound,
//                   the intra part being the small one).
//       send/recv   one step, S per rank (each rank sends to its ring successor); inter-node
//                   when the group spans nodes (the node-boundary ranks bound it).
//     Per-rank volumes: Thakur, Rabenseifner, Gropp, "Optimization of Collective Communication
//     Operations in MPICH", IJHPCA 19(1) 2005, doi:10.1177/1094342005051521.
// CollectivePlan::algorithm and ::protocol record what is used after any fall-back.
// A fat tree (ClusterSpec::network): after the choice, every inter-node phase is capped at the
// share of its rate the oversubscribed spine leaves it (fat_tree.hpp); NCCL chooses without it.
//
// Fully connected mesh (intra_node.peer_bandwidth > 0, hardware.hpp): every pair of GPUs has its
// own links, so a rank of an intra-node phase reaches min(bandwidth, p x peer_bandwidth), p being
// the peers it exchanges with: 1 for send/recv (its successor), g - 1 for a collective over g GPUs
// of the node (NCCL and RCCL run one channel per ring and spread the rings over every link; e.g.
// 8 MI300X: 7 x 64 = 448 GB/s for a group of 8, 64 GB/s for a pair or a point-to-point
// transfer). A plan carries it in the phase's rate_cap (times the link efficiency: rate_cap is a
// rate of delivered bytes); a measured plan replaces it.

#include <optional>
#include <string_view>
#include <vector>

#include "costmodel/hardware.hpp"
#include "costmodel/units.hpp"
#include "sim/time.hpp"

namespace parasim::cost {

enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kAllToAll,
  kSendRecv,
};
// "all-reduce", "all-gather", "reduce-scatter", "broadcast", "all-to-all", "send-recv".
const char* collective_name(CollectiveKind kind);
// The kind whose collective_name() is `name`; std::nullopt for any other text.
std::optional<CollectiveKind> parse_collective_kind(std::string_view name);

// kNvls: NVLink SHARP (NVSwitch multicast) all-reduce inside a node; kDirect: all-to-all.
enum class CollectiveAlgorithm { kRing, kTree, kNvls, kDirect };
// "ring", "tree", "nvls", "direct".
const char* algorithm_name(CollectiveAlgorithm algorithm);

// NCCL's protocols (nccl_model.hpp); plans of kinds NCCL's tuning does not cover use kSimple.
enum class CollectiveProtocol { kLL, kLL128, kSimple };
// "LL", "LL128", "Simple" (NCCL's spelling).
const char* protocol_name(CollectiveProtocol protocol);

// Where the ranks of one communicator sit. Invariant: size == gpus_per_node_in_group *
// nodes_spanned, all >= 1. A TP group of 8 inside a node is {8, 8, 1}; a DP group of 8 with one
// GPU per node is {8, 1, 8}; a group of 16 over two full 8-GPU nodes is {16, 8, 2}.
struct GroupPlacement {
  int size = 1;
  int gpus_per_node_in_group = 1;
  int nodes_spanned = 1;

  bool operator==(const GroupPlacement&) const = default;
};

enum class LinkClass { kIntraNode, kInterNode };
// "intra-node", "inter-node".
const char* link_name(LinkClass link);

// One phase of the plan: every rank sends bytes_sent_per_rank over its own `link`; `latency` is
// the phase's share of the collective's latency (NCCL's latency on the first phase of an NCCL
// plan, steps x per-hop latency otherwise; scaled in a calibrated plan); `steps` the algorithm
// steps it stands for (informational). `what` is a static label ("intra-node part").
// link_efficiency > 0: the fraction of the link's bandwidth the phase achieves uncontended (may
// exceed 1 when a measurement beats the link figure; +infinity when a calibrated plan's measured
// time leaves nothing to the bandwidth term).
struct CollectivePhase {
  LinkClass link = LinkClass::kIntraNode;
  Bytes bytes_sent_per_rank;
  sim::Time latency;
  int steps = 0;
  const char* what = "";
  double link_efficiency = 1.0;
  // A cap on the rank's rate of delivered bytes, below link_efficiency x the link bandwidth: a
  // mesh's peer links (header) or the pace of an NCCL plan's faster part (nccl_model.hpp);
  // zero: no cap. The rank's flow is capped there, so the rest of its bandwidth stays free for
  // other traffic. A measured plan clears it.
  Bandwidth rate_cap;
  // Runs at the same time as the next phase (contract above).
  bool concurrent_with_next = false;
};

struct CollectivePlan {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // after any fall-back
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;
  Bytes message;                                               // S, nccl-tests semantics
  std::vector<CollectivePhase> phases;                         // run in order; empty when free
};

// A phase of a point-to-point plan (all-to-all, send/recv, token_exchange.hpp): `steps` x the
// link's per-hop latency, the fabric's achieved share of the link, and on a mesh the cap of
// `peers` peer links (header). `peers`: how many of the group's GPUs a rank exchanges with on
// this link in this phase; `what` a static label.
CollectivePhase point_to_point_phase(LinkClass link, Bytes bytes, int steps, const char* what,
                                     const ClusterSpec& cluster, int peers);

// Plans `kind` of `message` bytes (nccl-tests S) over the group: NCCL's choice for the kinds
// NCCL's tuning covers, kDirect for all-to-all, one step for send/recv (header). Throws
// std::invalid_argument when the placement is inconsistent (size != g*N, any field < 1), message
// is negative, or a link the group uses has a bandwidth <= 0.
CollectivePlan plan_collective(CollectiveKind kind, Bytes message, const GroupPlacement& group,
                               const ClusterSpec& cluster);
// The same with the algorithm forced (NCCL_ALGO): the fastest protocol of `algorithm`; an
// algorithm NCCL does not run for this kind and placement falls back to NCCL's choice (as NCCL
// does); kDirect and kRing choose between all-to-all's two plans; send/recv is always one step.
CollectivePlan plan_collective(CollectiveKind kind, CollectiveAlgorithm algorithm, Bytes message,
                               const GroupPlacement& group, const ClusterSpec& cluster);

// Closed form, no contention: the sum over steps (contract above) of their latencies + the
// largest over their phases of bytes_sent_per_rank / min(link_efficiency x bandwidth of the
// phase's link class, rate_cap when set). The simulator's uncontended result equals this. Throws
// std::invalid_argument when a phase sends bytes over a link of non-positive bandwidth or with a
// link_efficiency that is not > 0.
sim::Time estimate_time(const CollectivePlan& plan, const ClusterSpec& cluster);

// Bytes each rank sends over links of class `link`, summed over the phases.
Bytes bytes_sent_per_rank(const CollectivePlan& plan, LinkClass link);
// Bytes each rank sends over all links, summed over the phases.
Bytes bytes_sent_per_rank(const CollectivePlan& plan);

// nccl-tests reporting (doc/PERFORMANCE.md). busbw_factor: all-reduce 2(n-1)/n; all-gather,
// reduce-scatter, all-to-all (n-1)/n; broadcast, send/recv 1. n >= 1 (throws otherwise).
double busbw_factor(CollectiveKind kind, int n);
// algbw = S / t (bytes per second). Throws std::invalid_argument when t <= 0.
Bandwidth algbw(Bytes message, sim::Time t);
// busbw = algbw x busbw_factor(kind, n): comparable with the per-rank link peak for any n.
Bandwidth busbw(CollectiveKind kind, int n, Bytes message, sim::Time t);

}  // namespace parasim::cost
