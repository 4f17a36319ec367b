#pragma once
// parasim::cost NCCL model — which algorithm and protocol NCCL runs a collective with, what that
// costs, and the plan (phases and flows, collective_cost.hpp) that makes the simulator reproduce
// the cost. Covers the kinds NCCL's tuning model covers: all-reduce, all-gather, reduce-scatter
// and broadcast. Constants: nccl_tuning.hpp (NCCL v2.23.4-1); link figures: the cluster's
// bandwidths (hardware.hpp) and fabric (collective_fabric.hpp).
//
// Selection (NCCL: src/graph/tuning.cc ncclTopoTuneModel / ncclTopoGetAlgoTime, src/enqueue.cc
// topoGetAlgoInfo): every enabled (algorithm, protocol) gets
//     time = latency + S / algorithm bandwidth
// and the smallest wins (the first in NCCL's order, tree, ring, NVLS x LL, LL128, Simple, on a
// tie). One call, no aggregation (latCount = 1). S is nccl-tests' message size, as NCCL's nBytes.
// Candidates:
//   all-reduce      tree, ring, NVLS (one node, fabric.nvls, Simple only)
//   all-gather,     ring (NCCL's NVLS all-gather / reduce-scatter inside a node (2.21+) and PAT for
//   reduce-scatter  one GPU per node (2.23+) are not modelled: no published bandwidth for the
//                   first, and the second postdates the measured runs parasim is checked against)
//   broadcast       ring
// x protocols LL, LL128 (when fabric.ll128), Simple.
//
// Group of n = g x N ranks (g GPUs in each of N nodes); ppn = g.
// Latency (us), with h_X the per-hop latency of link X, algorithm and protocol:
//   ring (all-reduce: nsteps 2(n-1), inter steps 2(N-1); all-gather, reduce-scatter: nsteps
//        n-1, inter steps N-1; inter steps 0 on one node):
//        base + (nsteps - inter steps) x intra + inter steps x inter, where intra = h_NVLink, at
//        least the network post overhead (Intel 1 us, AMD 2 us, x3 for Simple) when N > 1, and
//        inter = h_NET (the tree's h_NET when g == 1) + the plugin latency (twice for Simple).
//        All-reduce with Simple over N > 1 and S / (runtime channels x n) >= 64: x1.4.
//        So a ring's latency grows with the total rank count n, not with the nodes.
//   broadcast ring: base + one hop (NCCL's sameChannels topology, always so on one preset node).
//   tree (all-reduce): base + 2 ((g - 1) h_NVLink + floor(log2 N) (h_NET,tree + plugin)).
//   NVLS: h_NVLink,NVLS = 25 us (base 0).
// Bandwidth: B = the Simple bus bandwidth of the group's links, from the achieved share of each
// link class (fabric) and the share of the traffic each class carries per GPU (below):
//   N == 1: B = e_intra x b_intra;  g == 1: B = e_inter x b_inter;
//   otherwise B = min(g x e_inter x b_inter, g / (g - 1) x e_intra x b_intra)
// with b_intra the NVLink bandwidth (on a fully connected mesh at most (g - 1) x the peer link)
// and b_inter the NIC bandwidth (one NIC per GPU). Channels C: fabric.intra_node_channels on one
// node, g between nodes (one per NIC). Then NCCL's protocol factors and caps:
//   ring:  LL min(llMaxBw, 0.5 B); LL128 min(0.92 B, C x perChMaxRingLL128Bw); Simple B;
//          algorithm bandwidth = busBw x n / nsteps (all-reduce n / (2(n-1)), all-gather and
//          reduce-scatter n / (n-1), broadcast 1).
//   tree:  x = min(0.92 B, C x perChMaxTreeBw); LL min(x / 3.8, llMaxBw); LL128 min(x x 7/9 on
//          one node or 120/128, C x perChMaxTreeLL128Bw); Simple x; x treeCorrectionFactor of S;
//          algorithm bandwidth = busBw x 0.5.
//   NVLS:  algorithm bandwidth = e_nvls x b_intra x g / (g + 1), e_nvls fitted to the fabric's
//          8-GPU busbw (below).
// llMaxBw by the GPU architecture on one node, by the host CPU vendor on several; the per-channel
// caps by architecture; columns by N (1, 2, 3+).
//
// Traffic per rank (what the plan's flows carry): a ring over N > 1 nodes crosses a NIC at N of
// its n hops, so of a ring's per-rank volume V (all-reduce 2(n-1)/n S, all-gather and
// reduce-scatter (n-1)/n S, broadcast S) each GPU sends V / g over its NIC and V (g - 1) / g over
// NVLink; on one node all of V over NVLink. The tree (chains inside nodes, a double binary tree
// across them) sends 2S (g - 1) / g over NVLink and 2S / g over the NIC (N > 1). NVLS sends
// S (g + 1) / g over NVLink (every slice to the switch for the multimem reduction, the reduced
// 1/g slice back for the multicast) [inference from the multimem load-reduce / store pattern];
// e_nvls = share x (8 + 1) / (2 (8 - 1)) reproduces the fabric's 8-GPU busbw share.
//
// The plan: one phase per link class the traffic uses; on N > 1 nodes with g > 1 the NIC and
// NVLink parts are concurrent (CollectivePhase::concurrent_with_next: NCCL's channels pipeline the
// whole ring, so the time is bounded by the slower part, not the sum). The first phase carries
// the latency. Each class's flow carries its true bytes b with link_efficiency e = fabric share x
// the protocol's data share of the wire (LL 1/2, LL128 120/128, Simple 1; nccl_tuning.hpp) and a
// rate cap of b / T (T = S / algorithm bandwidth), so that every part of the plan ends at T: the
// uncontended plan takes exactly latency + T, NCCL's time for the chosen candidate, and under
// contention each part claims only the link share it needs.

#include <vector>

#include "costmodel/collective_cost.hpp"

namespace parasim::cost {

struct NcclCandidate {
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  CollectiveProtocol protocol = CollectiveProtocol::kSimple;
  double latency_us = 0;            // NCCL's latency, corrections included
  double bus_bandwidth = 0;         // NCCL's busBw after protocol factors and caps, bytes/s
  double algorithm_bandwidth = 0;   // S / (time - latency), bytes/s
  double time_s = 0;                // latency + S / algorithm_bandwidth
};

// True for the kinds the NCCL model covers (header).
bool nccl_models(CollectiveKind kind);

// Every (algorithm, protocol) NCCL evaluates for this collective, in NCCL's order; empty for a
// group of one. Throws std::invalid_argument for a kind nccl_models() rejects, an inconsistent
// placement, a negative message, or a link class the group uses with a bandwidth <= 0.
std::vector<NcclCandidate> nccl_candidates(CollectiveKind kind, Bytes message,
                                           const GroupPlacement& group,
                                           const ClusterSpec& cluster);

// The fastest candidate (the first on a tie); of `algorithm` only when given and NCCL runs it for
// this kind and placement, else of all (NCCL falls back likewise). Throws as nccl_candidates, and
// for a group of one.
NcclCandidate nccl_choice(CollectiveKind kind, Bytes message, const GroupPlacement& group,
                          const ClusterSpec& cluster, const CollectiveAlgorithm* algorithm = nullptr);

// The plan of `chosen` (header): its phases, flows, link efficiencies and rate caps.
CollectivePlan nccl_plan(CollectiveKind kind, Bytes message, const GroupPlacement& group,
                         const ClusterSpec& cluster, const NcclCandidate& chosen);

}  // namespace parasim::cost
