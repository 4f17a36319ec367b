#pragma once
// parasim::cost collective cost — how a collective over a group of GPUs turns into link traffic.
//
// A collective is planned into phases (CollectivePlan). Contract with the simulator:
//   * The phases run one after another, in order; phase k+1 starts when every rank has finished
//     phase k.
//   * In a phase, EVERY rank of the group sends `bytes_sent_per_rank` over its own link of class
//     `link` (its NVLink port for kIntraNode, its NIC for kInterNode; both are per GPU and per
//     direction, see hardware.hpp). The simulator turns each phase into one flow per rank on that
//     rank's link resource and adds `latency` (= steps x per-hop latency) once per phase. On a
//     fully connected mesh (below) an intra-node send/recv flow crosses the sender's port and the
//     pair's own link (capacity rate_cap) instead of the receiver's port; every other capped flow
//     carries rate_cap as its own limit.
//   * A phase achieves `link_efficiency` x the link bandwidth when uncontended (1 in analytical
//     plans; a calibrated plan, measured_collectives.hpp, sets it so that the plan reproduces a
//     measured time, and clears rate_cap). The simulator pushes bytes_sent_per_rank /
//     link_efficiency through the link; bytes_sent_per_rank stays the true traffic, for reports.
//   * Uncontended, the simulated time therefore equals estimate_time(): the sum over phases of
//     latency + bytes_sent_per_rank / min(link_efficiency x bandwidth(link), rate_cap).
//   * A group of size 1 has no phases: it is free.
//
// Message size S follows nccl-tests (NVIDIA/nccl-tests doc/PERFORMANCE.md): S is the bytes per rank for
// all-reduce, broadcast and send/recv, and the total gathered size (count x type size x n) for
// all-gather, reduce-scatter and all-to-all.
//
// Per-rank bytes sent, flat group of n ranks (Thakur, Rabenseifner, Gropp, "Optimization of
// Collective Communication Operations in MPICH", IJHPCA 19(1) 2005, doi:10.1177/1094342005051521;
// the same volumes NCCL's ring moves):
//   all-reduce (ring: reduce-scatter + all-gather)      2(n-1)/n * S   steps 2(n-1)
//   all-gather, reduce-scatter (ring)                   (n-1)/n * S    steps n-1
//   all-to-all (ring = pairwise exchange / direct)      (n-1)/n * S    steps n-1 / 1
//   broadcast (pipelined ring / chain)                  S              steps n-1
//   send/recv (each rank sends to its ring successor)   S              steps 1
// Algorithms:
//   kRing   every kind, as above.
//   kTree   all-reduce only: 2*ceil(log2 n) steps of latency (reduce up a binary tree, broadcast
//           down). SIMPLIFICATION: the bandwidth term is kept equal to the ring's 2(n-1)/n * S;
//           NCCL's double binary tree moves about 2S per rank and reaches a similar bus bandwidth
//           for large messages, so only the latency term differs. Other kinds fall back to kRing.
//   kDirect all-to-all, all-gather, reduce-scatter: one step (every rank posts all n-1 sends at
//           once, as NCCL's grouped send/recv all-to-all does); all-reduce: two steps (direct
//           reduce-scatter then direct all-gather); send/recv one step; broadcast falls back to
//           kRing (a direct broadcast would load the root alone, which the per-rank contract
//           cannot express).
// CollectivePlan::algorithm records the algorithm actually used after any fall-back.
//
// Placement. A group of n = g x N ranks has g GPUs in each of N nodes (GroupPlacement).
//   * N == 1 (inside a node) or g == 1 (one GPU per node): one level; a single phase on
//     kIntraNode or kInterNode respectively.
//   * g > 1 and N > 1: hierarchical, two-level decomposition (Thakur et al. 2005 section 4; it is
//     also what NCCL's multi-channel rings amount to: with one ring per NIC each NIC carries 1/g
//     of the data, so the inter-node load per GPU is that of an N-rank collective on S/g):
//       all-reduce:     intra reduce-scatter (g-1)/g*S; inter all-reduce of S/g,
//                       2(N-1)/N * S/g; intra all-gather (g-1)/g*S.
//       reduce-scatter: intra reduce-scatter (g-1)/g*S (each rank now holds S/g partially
//                       reduced); inter reduce-scatter of S/g, (N-1)/N * S/g.
//       all-gather:     inter all-gather of the S/g slice of this rail, (N-1)/N * S/g; intra
//                       all-gather (g-1)/g*S. (Reverse order of reduce-scatter: the slow link
//                       carries the small message.) Total per rank (n-1)/n*S, as flat.
//       all-to-all:     intra exchange with the g-1 node peers, (g-1)/n * S; inter exchange with
//                       the n-g remote ranks, (N-1)/N * S. Total (n-1)/n*S. Real all-to-all runs
//                       both at once; serialising them is an upper bound (intra is the small part).
//       broadcast:      each of the g rails broadcasts an S/g slice across the N nodes (pipelined
//                       ring, S/g per rank, N-1 steps), then an intra all-gather (g-1)/g*S. The
//                       root node's initial scatter is pipelined into the rings and not modelled.
//       send/recv:      one phase on kInterNode, S per rank: the node-boundary ranks bound it.
//     Tree all-reduce on a hierarchical group uses the tree for the inter-node phase only
//     (2*ceil(log2 N) steps), as NCCL's tree runs chains inside nodes and a tree across them.
// Latency per phase = steps x per-hop latency of that link class (NCCL's ring model,
// NVIDIA/nccl src/graph/tuning.cc, without its base latency, which calibration adds on top).
// Fully connected mesh (intra_node.peer_bandwidth > 0, hardware.hpp): every pair of GPUs has its
// own links, so a rank of an intra-node phase reaches min(bandwidth, p x peer_bandwidth), p being
// the peers it exchanges with: 1 for send/recv (its successor), g - 1 for a collective over g GPUs
// of the node (NCCL and RCCL run one channel per ring and spread the rings over every link; e.g.
// 8 MI300X: 7 x 64 = 448 GB/s for a group of 8, 64 GB/s for a pair or a point-to-point
// transfer). The analytical plan carries it as the phase's rate_cap; a measured plan replaces it.

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

enum class CollectiveAlgorithm { kRing, kTree, kDirect };
// "ring", "tree", "direct".
const char* algorithm_name(CollectiveAlgorithm algorithm);

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

// One step of the plan: every rank sends bytes_sent_per_rank over its own `link`; latency is
// steps x per-hop latency of that link class (scaled in a calibrated plan). `what` is a static
// label ("intra reduce-scatter"). link_efficiency > 0: the fraction of the link's bandwidth the
// phase achieves uncontended (may exceed 1 when a measurement beats the link figure; +infinity
// when a calibrated plan's measured time leaves nothing to the bandwidth term).
struct CollectivePhase {
  LinkClass link = LinkClass::kIntraNode;
  Bytes bytes_sent_per_rank;
  sim::Time latency;
  int steps = 0;
  const char* what = "";
  double link_efficiency = 1.0;
  // A fully connected mesh: what the links to the peers of this phase carry per rank, below the
  // GPU's bandwidth (header); zero: no cap. The rank's flow is capped there, so the rest of its
  // bandwidth stays free for other traffic. A measured plan clears it.
  Bandwidth rate_cap;
};

struct CollectivePlan {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // after any fall-back
  Bytes message;                                               // S, nccl-tests semantics
  std::vector<CollectivePhase> phases;                         // run in order; empty when free
};

// Plans `kind` of `message` bytes (nccl-tests S) over the group. Throws std::invalid_argument when
// the placement is inconsistent (size != g*N, any field < 1) or message is negative.
CollectivePlan plan_collective(CollectiveKind kind, CollectiveAlgorithm algorithm, Bytes message,
                               const GroupPlacement& group, const ClusterSpec& cluster);

// Closed form, no contention: sum over phases of latency + bytes_sent_per_rank / min(
// link_efficiency x bandwidth of the phase's link class, rate_cap when set). The simulator's
// uncontended result equals this. Throws
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
