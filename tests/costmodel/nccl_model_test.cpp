// The NCCL model (nccl_model.hpp): latencies, bandwidths and the choice, against closed forms
// written out from NCCL v2.23.4-1 tuning.cc with the DGX A100 / DGX H100 fabric figures.
#include "costmodel/nccl_model.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "costmodel/cluster_presets.hpp"

using namespace parasim;
using namespace parasim::cost;

namespace {

using Algo = CollectiveAlgorithm;
using Proto = CollectiveProtocol;
using Kind = CollectiveKind;

ClusterSpec a100(int nodes = 128) {
  ClusterSpec c = find_cluster_preset("dgx-a100-80gb")->spec;
  c.nodes = nodes;
  return c;
}

ClusterSpec h100(int nodes = 128) {
  ClusterSpec c = find_cluster_preset("dgx-h100")->spec;
  c.nodes = nodes;
  return c;
}

const NcclCandidate& find(const std::vector<NcclCandidate>& all, Algo a, Proto p) {
  for (const auto& c : all) {
    if (c.algorithm == a && c.protocol == p) return c;
  }
  throw std::logic_error("candidate missing");
}

bool has(const std::vector<NcclCandidate>& all, Algo a) {
  for (const auto& c : all) {
    if (c.algorithm == a) return true;
  }
  return false;
}

bool rel_eq(double got, double want, double tol = 1e-12) {
  return std::abs(got - want) <= tol * std::abs(want);
}

// DGX A100 figures (collective_fabric.cpp).
constexpr double kNvlinkA100 = 235.65 / 300.0 * 300e9;  // achieved NVLink, bytes/s
constexpr double kNicA100 = 23.94 / 25.0 * 25e9;        // achieved HDR NIC, bytes/s

}  // namespace

TEST_CASE("NCCL model: which algorithms are evaluated for which collective") {
  const ClusterSpec c = a100();
  const Bytes s{1e6};
  const auto ar = nccl_candidates(Kind::kAllReduce, s, {64, 8, 8}, c);
  CHECK(ar.size() == 6);  // tree and ring x LL, LL128, Simple; no NVLS on A100
  CHECK(ar[0].algorithm == Algo::kTree);
  CHECK(ar[0].protocol == Proto::kLL);
  CHECK(ar[5].algorithm == Algo::kRing);
  CHECK(ar[5].protocol == Proto::kSimple);
  for (Kind k : {Kind::kAllGather, Kind::kReduceScatter, Kind::kBroadcast}) {
    const auto all = nccl_candidates(k, s, {64, 8, 8}, c);
    CHECK(all.size() == 3);
    CHECK_FALSE(has(all, Algo::kTree));
  }
  // NVLS: all-reduce inside an NVLink SHARP node only.
  CHECK(has(nccl_candidates(Kind::kAllReduce, s, {8, 8, 1}, h100()), Algo::kNvls));
  CHECK_FALSE(has(nccl_candidates(Kind::kAllReduce, s, {16, 8, 2}, h100()), Algo::kNvls));
  CHECK_FALSE(has(nccl_candidates(Kind::kAllGather, s, {8, 8, 1}, h100()), Algo::kNvls));
  // LL128 off: two protocols left.
  ClusterSpec no_ll128 = a100();
  no_ll128.fabric.ll128 = false;
  CHECK(nccl_candidates(Kind::kAllGather, s, {8, 8, 1}, no_ll128).size() == 2);
  CHECK(nccl_candidates(Kind::kAllReduce, s, {1, 1, 1}, c).empty());
  CHECK_THROWS_AS(nccl_candidates(Kind::kAllToAll, s, {8, 8, 1}, c), std::invalid_argument);
  CHECK_THROWS_AS(nccl_candidates(Kind::kSendRecv, s, {2, 2, 1}, c), std::invalid_argument);
}

TEST_CASE("NCCL ring latency grows with the ranks: (n - N) intra hops and (N - 1) inter hops") {
  const Bytes s{8};
  // All-gather on g = 8 GPUs per node over N nodes of an AMD-hosted DGX A100: intra hops cost at
  // least the AMD post overhead (2 us, 6 us for Simple), inter hops NCCL's ring NET latency.
  for (int nodes : {2, 8, 64, 128}) {
    const int n = 8 * nodes;
    CAPTURE(nodes);
    const auto all = nccl_candidates(Kind::kAllGather, s, {n, 8, nodes}, a100());
    CHECK(rel_eq(find(all, Algo::kRing, Proto::kLL).latency_us,
                 6.6 + (n - nodes) * 2.0 + (nodes - 1) * 2.7));
    CHECK(rel_eq(find(all, Algo::kRing, Proto::kLL128).latency_us,
                 14.0 + (n - nodes) * 2.0 + (nodes - 1) * 4.0));
    CHECK(rel_eq(find(all, Algo::kRing, Proto::kSimple).latency_us,
                 8.4 + (n - nodes) * 6.0 + (nodes - 1) * 14.0));
    // An Intel host: the NVLink hop itself where it is above 1 us (3 us for Simple).
    const auto intel = nccl_candidates(Kind::kAllGather, s, {n, 8, nodes}, h100());
    CHECK(rel_eq(find(intel, Algo::kRing, Proto::kLL).latency_us,
                 6.6 + (n - nodes) * 1.0 + (nodes - 1) * 2.7));
    CHECK(rel_eq(find(intel, Algo::kRing, Proto::kLL128).latency_us,
                 14.0 + (n - nodes) * 1.9 + (nodes - 1) * 4.0));
    CHECK(rel_eq(find(intel, Algo::kRing, Proto::kSimple).latency_us,
                 8.4 + (n - nodes) * 3.4 + (nodes - 1) * 14.0));
  }
  // One node: every hop is NVLink, no post overhead.
  const auto node = nccl_candidates(Kind::kAllGather, s, {8, 8, 1}, a100());
  CHECK(rel_eq(find(node, Algo::kRing, Proto::kLL).latency_us, 6.6 + 7 * 0.6));
  CHECK(rel_eq(find(node, Algo::kRing, Proto::kSimple).latency_us, 8.4 + 7 * 3.4));
  // One GPU per node: all hops are NET hops at the tree's NET latency (ppn = 1).
  const auto rail = nccl_candidates(Kind::kReduceScatter, s, {16, 1, 16}, a100());
  CHECK(rel_eq(find(rail, Algo::kRing, Proto::kLL).latency_us, 6.6 + 15 * 5.0));
  CHECK(rel_eq(find(rail, Algo::kRing, Proto::kSimple).latency_us, 8.4 + 15 * 14.0));
  // The network plugin's latency: once per NET hop, twice for Simple.
  ClusterSpec efa = h100(4);
  efa.fabric.net_plugin_latency = sim::Time::us(20);
  const auto plugin = nccl_candidates(Kind::kAllGather, s, {32, 8, 4}, efa);
  CHECK(rel_eq(find(plugin, Algo::kRing, Proto::kLL).latency_us, 6.6 + 28 * 1.0 + 3 * 22.7));
  CHECK(rel_eq(find(plugin, Algo::kRing, Proto::kSimple).latency_us, 8.4 + 28 * 3.4 + 3 * 54.0));
}

TEST_CASE("NCCL ring all-reduce latency: 2(n-1) steps, 2(N-1) inter, x1.4 plateau for Simple") {
  const int nodes = 8, n = 64;
  // 64 B per runtime channel and rank: 16 runtime channels (8 NICs doubled) x 64 ranks x 64 B.
  const double threshold = 16.0 * 64 * 64;
  const auto below = nccl_candidates(Kind::kAllReduce, Bytes{threshold - 1}, {n, 8, nodes}, a100());
  const auto above = nccl_candidates(Kind::kAllReduce, Bytes{threshold}, {n, 8, nodes}, a100());
  const double simple = 8.4 + (2 * 63 - 2 * 7) * 6.0 + 2 * 7 * 14.0;
  CHECK(rel_eq(find(below, Algo::kRing, Proto::kSimple).latency_us, simple));
  CHECK(rel_eq(find(above, Algo::kRing, Proto::kSimple).latency_us, 1.4 * simple));
  CHECK(rel_eq(find(above, Algo::kRing, Proto::kLL).latency_us,
               6.6 + (2 * 63 - 2 * 7) * 2.0 + 2 * 7 * 2.7));
  // No plateau on one node.
  const auto node = nccl_candidates(Kind::kAllReduce, Bytes{1e9}, {8, 8, 1}, a100());
  CHECK(rel_eq(find(node, Algo::kRing, Proto::kSimple).latency_us, 8.4 + 14 * 3.4));
}

TEST_CASE("NCCL tree latency: base + 2 ((g - 1) intra + floor(log2 N) inter)") {
  const Bytes s{8};
  for (int nodes : {1, 2, 3, 8, 100, 128}) {
    CAPTURE(nodes);
    const auto all = nccl_candidates(Kind::kAllReduce, s, {8 * nodes, 8, nodes}, a100());
    const double log2n = std::floor(std::log2(nodes));
    CHECK(rel_eq(find(all, Algo::kTree, Proto::kLL).latency_us, 6.8 + 2 * (7 * 0.6 + log2n * 5.0)));
    CHECK(rel_eq(find(all, Algo::kTree, Proto::kLL128).latency_us,
                 14.0 + 2 * (7 * 1.25 + log2n * 8.5)));
    CHECK(rel_eq(find(all, Algo::kTree, Proto::kSimple).latency_us,
                 8.4 + 2 * (7 * 4.0 + log2n * 14.0)));
  }
  const auto nvls = nccl_candidates(Kind::kAllReduce, s, {8, 8, 1}, h100());
  CHECK(find(nvls, Algo::kNvls, Proto::kSimple).latency_us == 25.0);
}

TEST_CASE("NCCL bandwidths: achieved link shares, protocol factors and per-channel caps") {
  const Bytes big{1e9};
  // One A100 node: B = achieved NVLink; 12 channels.
  auto node = nccl_candidates(Kind::kAllGather, big, {8, 8, 1}, a100());
  CHECK(rel_eq(find(node, Algo::kRing, Proto::kSimple).bus_bandwidth, kNvlinkA100));
  CHECK(rel_eq(find(node, Algo::kRing, Proto::kLL).bus_bandwidth, 87.7e9));  // Ampere llMaxBw
  CHECK(rel_eq(find(node, Algo::kRing, Proto::kLL128).bus_bandwidth,
               std::min(0.92 * kNvlinkA100, 12 * 20e9)));
  // Ring algorithm bandwidth = busBw x n / nsteps.
  CHECK(rel_eq(find(node, Algo::kRing, Proto::kSimple).algorithm_bandwidth, kNvlinkA100 * 8 / 7));
  // Eight nodes: B = 8 NICs; LL capped by the AMD row (19 GB/s for 3+ nodes); LL128 by 8 x 20.
  auto nodes = nccl_candidates(Kind::kAllReduce, big, {64, 8, 8}, a100());
  CHECK(rel_eq(find(nodes, Algo::kRing, Proto::kSimple).bus_bandwidth, 8 * kNicA100));
  CHECK(rel_eq(find(nodes, Algo::kRing, Proto::kLL).bus_bandwidth, 19.0e9));
  CHECK(rel_eq(find(nodes, Algo::kRing, Proto::kLL128).bus_bandwidth, 160e9));
  CHECK(rel_eq(find(nodes, Algo::kRing, Proto::kSimple).algorithm_bandwidth,
               8 * kNicA100 * 64 / 126));
  // Tree: min(0.92 B, 8 x 17.8), x the correction at 1 GB (log2(1e9 / 64) = 23: none), x 0.5.
  CHECK(rel_eq(find(nodes, Algo::kTree, Proto::kSimple).bus_bandwidth,
               std::min(0.92 * 8 * kNicA100, 8 * 17.8e9)));
  CHECK(rel_eq(find(nodes, Algo::kTree, Proto::kSimple).algorithm_bandwidth,
               0.5 * std::min(0.92 * 8 * kNicA100, 8 * 17.8e9)));
  // The tree correction at 1 MiB (log2(2^20 / 64) = 14): Simple x0.5, LL x0.5, LL128 x0.6.
  auto mid = nccl_candidates(Kind::kAllReduce, Bytes{1048576}, {64, 8, 8}, a100());
  const double x = std::min(0.92 * 8 * kNicA100, 8 * 17.8e9);
  CHECK(rel_eq(find(mid, Algo::kTree, Proto::kSimple).bus_bandwidth, 0.5 * x));
  CHECK(rel_eq(find(mid, Algo::kTree, Proto::kLL).bus_bandwidth, 0.5 * std::min(x / 3.8, 19.0e9)));
  CHECK(rel_eq(find(mid, Algo::kTree, Proto::kLL128).bus_bandwidth,
               0.6 * std::min(x * 120.0 / 128.0, 8 * 20e9)));
  // Two nodes: the N2 columns (AMD LL 22.5 GB/s).
  auto two = nccl_candidates(Kind::kAllGather, big, {16, 8, 2}, a100(2));
  CHECK(rel_eq(find(two, Algo::kRing, Proto::kLL).bus_bandwidth, 22.5e9));
  // NVLink bounds B when the node's NICs together outrun it: g / (g - 1) x achieved NVLink.
  ClusterSpec fat = a100(4);
  fat.inter_node.bandwidth = Bandwidth{100e9};
  auto fat_all = nccl_candidates(Kind::kAllGather, big, {32, 8, 4}, fat);
  CHECK(rel_eq(find(fat_all, Algo::kRing, Proto::kSimple).bus_bandwidth, 8.0 / 7.0 * kNvlinkA100));
  // One GPU per node: one NIC.
  auto rail = nccl_candidates(Kind::kAllGather, big, {16, 1, 16}, a100());
  CHECK(rel_eq(find(rail, Algo::kRing, Proto::kSimple).bus_bandwidth, kNicA100));
  // NVLS on an H100 node: the fabric's 480 GB/s nccl-tests busbw at 8 GPUs.
  auto nvls = nccl_candidates(Kind::kAllReduce, big, {8, 8, 1}, h100());
  CHECK(rel_eq(find(nvls, Algo::kNvls, Proto::kSimple).bus_bandwidth, 480e9));
  CHECK(rel_eq(find(nvls, Algo::kNvls, Proto::kSimple).algorithm_bandwidth, 480e9 * 8 / 14));
}

TEST_CASE("NCCL picks the fastest candidate; the switch between two sits where their times cross") {
  // 8 A100 in a node, all-gather: LL wins small messages, Simple large. Where LL's time equals
  // LL128's, S* = (lat_LL128 - lat_LL) / (1/algbw_LL - 1/algbw_LL128).
  const ClusterSpec c = a100();
  const GroupPlacement node{8, 8, 1};
  const auto probe = nccl_candidates(Kind::kAllGather, Bytes{1}, node, c);
  const NcclCandidate& ll = find(probe, Algo::kRing, Proto::kLL);
  const NcclCandidate& ll128 = find(probe, Algo::kRing, Proto::kLL128);
  const NcclCandidate& simple = find(probe, Algo::kRing, Proto::kSimple);
  const double s_ll_ll128 = (ll128.latency_us - ll.latency_us) * 1e-6 /
                            (1.0 / ll.algorithm_bandwidth - 1.0 / ll128.algorithm_bandwidth);
  const double s_ll128_simple = (simple.latency_us - ll128.latency_us) * 1e-6 /
                                (1.0 / ll128.algorithm_bandwidth - 1.0 / simple.algorithm_bandwidth);
  REQUIRE(s_ll_ll128 < s_ll128_simple);
  auto chosen = [&](double bytes) { return nccl_choice(Kind::kAllGather, Bytes{bytes}, node, c).protocol; };
  CHECK(chosen(8) == Proto::kLL);
  CHECK(chosen(s_ll_ll128 * 0.999) == Proto::kLL);
  CHECK(chosen(s_ll_ll128 * 1.001) == Proto::kLL128);
  CHECK(chosen(s_ll128_simple * 0.999) == Proto::kLL128);
  CHECK(chosen(s_ll128_simple * 1.001) == Proto::kSimple);
  // The choice is the minimum of the candidates' times at every size.
  for (double bytes : {8.0, 65536.0, 1048576.0, 16777216.0, 268435456.0, 1073741824.0}) {
    for (const GroupPlacement& g : {GroupPlacement{8, 8, 1}, GroupPlacement{64, 8, 8},
                                    GroupPlacement{1024, 8, 128}}) {
      const auto all = nccl_candidates(Kind::kAllReduce, Bytes{bytes}, g, c);
      const NcclCandidate best = nccl_choice(Kind::kAllReduce, Bytes{bytes}, g, c);
      for (const auto& cand : all) CHECK(best.time_s <= cand.time_s);
    }
  }
  // At scale tree wins all-reduce (latency log2 in nodes); a ring stays the only all-gather.
  CHECK(nccl_choice(Kind::kAllReduce, Bytes{65536}, {1024, 8, 128}, c).algorithm == Algo::kTree);
  CHECK(nccl_choice(Kind::kAllReduce, Bytes{1 << 30}, {8, 8, 1}, c).algorithm == Algo::kRing);
  CHECK(nccl_choice(Kind::kAllReduce, Bytes{1 << 30}, {8, 8, 1}, h100()).algorithm == Algo::kNvls);
  // A forced algorithm NCCL does not run for the kind falls back to the free choice.
  const Algo tree = Algo::kTree;
  CHECK(nccl_choice(Kind::kAllGather, Bytes{1e6}, {64, 8, 8}, c, &tree).algorithm == Algo::kRing);
  CHECK(nccl_choice(Kind::kAllReduce, Bytes{1 << 30}, {64, 8, 8}, c, &tree).algorithm == Algo::kTree);
}

TEST_CASE("NCCL plan: true bytes per link class, concurrent NIC and NVLink parts, the model time") {
  const ClusterSpec c = a100();
  for (Kind kind : {Kind::kAllReduce, Kind::kAllGather, Kind::kReduceScatter, Kind::kBroadcast}) {
    for (const GroupPlacement& g : {GroupPlacement{8, 8, 1}, GroupPlacement{4, 4, 1},
                                    GroupPlacement{64, 8, 8}, GroupPlacement{1024, 8, 128},
                                    GroupPlacement{16, 1, 16}, GroupPlacement{32, 2, 16}}) {
      for (double bytes : {8.0, 65536.0, 1048576.0, 16777216.0, 268435456.0, 1073741824.0}) {
        CAPTURE(collective_name(kind));
        CAPTURE(g.size);
        CAPTURE(bytes);
        for (const NcclCandidate& cand : nccl_candidates(kind, Bytes{bytes}, g, c)) {
          const CollectivePlan plan = nccl_plan(kind, Bytes{bytes}, g, c, cand);
          CHECK(plan.algorithm == cand.algorithm);
          CHECK(plan.protocol == cand.protocol);
          // Uncontended, the plan takes NCCL's time for the candidate, to the picosecond.
          const sim::Time want = sim::Time::us(cand.latency_us) +
                                 sim::Time::seconds(bytes / cand.algorithm_bandwidth);
          CHECK(std::abs((estimate_time(plan, c) - want).picoseconds()) <= 1);
          // Traffic: a ring's per-rank volume, 1/g of it over the NIC when it spans nodes.
          const double n = g.size;
          const double volume = cand.algorithm == Algo::kTree
                                    ? (g.nodes_spanned > 1 ? 2 * bytes : 2 * bytes * (n - 1) / n)
                                    : bytes * (kind == Kind::kBroadcast ? 1.0 : busbw_factor(kind, g.size));
          CHECK(rel_eq(bytes_sent_per_rank(plan).value, volume, 1e-12));
          const double nic = g.nodes_spanned > 1 ? volume / g.gpus_per_node_in_group : 0.0;
          CHECK(rel_eq(bytes_sent_per_rank(plan, LinkClass::kInterNode).value + 1.0, nic + 1.0, 1e-12));
          const bool both = g.nodes_spanned > 1 && g.gpus_per_node_in_group > 1;
          REQUIRE(plan.phases.size() == (both ? 2u : 1u));
          CHECK(plan.phases[0].concurrent_with_next == both);
        }
      }
    }
  }
}

TEST_CASE("NCCL plan: link efficiency = achieved share x the protocol's data share of the wire") {
  const ClusterSpec c = a100();
  const Bytes s{1 << 30};
  const auto all = nccl_candidates(Kind::kAllGather, s, {64, 8, 8}, c);
  const CollectivePlan simple = nccl_plan(Kind::kAllGather, s, {64, 8, 8}, c,
                                          find(all, Algo::kRing, Proto::kSimple));
  REQUIRE(simple.phases.size() == 2);
  CHECK(simple.phases[0].link == LinkClass::kInterNode);
  CHECK(simple.phases[0].link_efficiency == doctest::Approx(23.94 / 25.0));
  CHECK(simple.phases[1].link == LinkClass::kIntraNode);
  CHECK(simple.phases[1].link_efficiency == doctest::Approx(235.65 / 300.0));
  // The NIC part is the bottleneck: its cap is its own achieved rate; the NVLink part is paced to
  // end with it: 7 of 8 GPUs' hops at the NIC's pace, below NVLink's achieved rate.
  CHECK(simple.phases[0].rate_cap.bytes_per_s == doctest::Approx(kNicA100));
  CHECK(simple.phases[1].rate_cap.bytes_per_s == doctest::Approx(7 * kNicA100));
  CHECK(simple.phases[1].rate_cap.bytes_per_s < kNvlinkA100);
  const CollectivePlan ll = nccl_plan(Kind::kAllGather, s, {64, 8, 8}, c,
                                      find(all, Algo::kRing, Proto::kLL));
  CHECK(ll.phases[0].link_efficiency == doctest::Approx(0.5 * 23.94 / 25.0));
  CHECK(ll.phases[0].latency == sim::Time::us(find(all, Algo::kRing, Proto::kLL).latency_us));
  CHECK(ll.phases[1].latency == sim::Time::zero());
}
