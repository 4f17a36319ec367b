#pragma once
// parasim::cost fat tree — a rail-optimised two-tier (leaf / spine) network with an
// oversubscribed spine, and the share of its rate an inter-node phase keeps when its traffic
// crosses the spine.
//
// Topology: rail-optimised as in NVIDIA's DGX SuperPOD reference architectures: NIC i of every
// node of a leaf group goes to that group's leaf switch i, so same-rail traffic among the group's
// `nodes_per_leaf` (L) nodes stays in the leaf and everything else crosses the spine. A leaf has L
// downlinks of B (the NIC bandwidth, ClusterSpec::inter_node) and L x B / R of uplinks to the
// spine, R = `oversubscription` >= 1 (1: non-blocking). Uplinks are full duplex: each direction
// is counted on its own.
//
// Model (derivation): in an inter-node phase every rank pushes its NIC flow at a rate r. A leaf's
// uplink carries c x r, c being the phase's crossing load of that leaf in NIC flows, and carries
// at most L x B / R; so r <= L x B / (R x c), i.e. the phase keeps
//     spine_share = min(1, L / (R x c_max))
// of the rate it has without the spine (B x link efficiency, or a lower cap), c_max the largest
// crossing load of any leaf. The crossing load per traffic pattern, for a group spanning N > L
// nodes (N <= L: the group stays in one leaf, share 1):
//   * kRing: NCCL's rings (all-reduce, all-gather, reduce-scatter, broadcast) and send/recv to the
//     ring successor. A ring visits the nodes in order with one flow per rail from each node to
//     the next (every channel's ring crosses at the same boundaries, sharing r), so a leaf sends
//     one flow out: c = 1. The ring slows only when R > L.
//   * kTree: NCCL's double binary tree over the nodes (tree all-reduce). Rank r's parent in the
//     first tree is (r xor b) or 2b, or r xor b where that is out of range, b the lowest set bit
//     of r; the second tree is the first mirrored (n-1-r) for even n and shifted by one for odd n
//     (NVIDIA/nccl src/graph/trees.cc, ncclGetBtree and ncclGetDtree). Each tree carries half of
//     the node's rail share S/g: an edge moves S/(2g) each way while a rank's NIC moves 2S/g
//     (nccl_model.cpp), so an edge is a quarter NIC flow: c = (edges of both trees with one end
//     in the leaf and one outside) / 4.
//   * kUniform: all-to-all and DeepEP's dispatch and combine (token_exchange.hpp): each node
//     spreads its inter-node traffic evenly over the N - 1 others (same rail, NVLink forwarding
//     first), so of a leaf's m nodes the share (N - m) / (N - 1) leaves: c = m (N - m) / (N - 1).
// Placement (assumption): the group's N nodes fill whole leaf groups from a leaf's first node,
// min(N, L) per leaf, the last leaf the rest: a scheduler's packed placement and the best case. A
// group whose nodes are strided over more leaves crosses more; not modelled. The spine's load is
// the phase's own: other collectives under the same leaf at the same time do not share the
// uplink here (the simulator's links are per GPU), and a measured plan (measured_collectives.hpp)
// already contains whatever spine it was measured on and keeps its own rate.

#include "costmodel/collective_cost.hpp"

namespace parasim::cost {

// FatTree (L and R) is part of the cluster's description: hardware.hpp.

enum class SpinePattern { kRing, kTree, kUniform };

// The crossing load c_max (header) of a group over `nodes` nodes. nodes >= 1, L >= 1 (throws
// std::invalid_argument otherwise); 0 when the group stays in one leaf.
double spine_crossing_load(SpinePattern pattern, int nodes, int nodes_per_leaf);

// min(1, L / (R x c_max)); 1 when the fat tree is not enabled or nothing crosses.
double spine_share(SpinePattern pattern, int nodes, const FatTree& network);

// The pattern of a plan's inter-node phases: kUniform for all-to-all, kTree for NCCL's tree,
// kRing otherwise (rings and send/recv).
SpinePattern spine_pattern(const CollectivePlan& plan);

// Caps every inter-node phase of `plan` at spine_share x its rate without the spine (its rate_cap
// when set and lower, else link_efficiency x inter_node bandwidth). No change when the share is 1.
void apply_spine(CollectivePlan& plan, SpinePattern pattern, int nodes, const ClusterSpec& cluster);

}  // namespace parasim::cost
