#include "costmodel/collective_cost.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

using namespace parasim;
using namespace parasim::cost;

namespace {

ClusterSpec test_cluster() {
  ClusterSpec c;
  c.name = "test";
  c.gpus_per_node = 8;
  c.nodes = 16;
  c.intra_node = {Bandwidth{450e9}, sim::Time::ns(600)};
  c.inter_node = {Bandwidth{50e9}, sim::Time::us(2.7)};
  return c;
}

bool rel_eq(double got, double want, double tol = 1e-12) {
  return std::abs(got - want) <= tol * std::abs(want);
}

constexpr CollectiveKind kAllKinds[] = {CollectiveKind::kAllReduce,     CollectiveKind::kAllGather,
                                        CollectiveKind::kReduceScatter, CollectiveKind::kBroadcast,
                                        CollectiveKind::kAllToAll,      CollectiveKind::kSendRecv};

// Expected per-rank bytes of a flat group, as a fraction of S (nccl-tests S semantics).
double expected_fraction(CollectiveKind kind, int n) {
  const double nd = n;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (nd - 1.0) / nd;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return (nd - 1.0) / nd;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kSendRecv:
      return 1.0;
  }
  return -1;
}

}  // namespace

TEST_CASE("collective names") {
  CHECK(std::string(algorithm_name(CollectiveAlgorithm::kNvls)) == "nvls");
  CHECK(std::string(protocol_name(CollectiveProtocol::kLL)) == "LL");
  CHECK(std::string(protocol_name(CollectiveProtocol::kLL128)) == "LL128");
  CHECK(std::string(protocol_name(CollectiveProtocol::kSimple)) == "Simple");
  CHECK(std::string(collective_name(CollectiveKind::kAllReduce)) == "all-reduce");
  CHECK(std::string(collective_name(CollectiveKind::kAllGather)) == "all-gather");
  CHECK(std::string(collective_name(CollectiveKind::kReduceScatter)) == "reduce-scatter");
  CHECK(std::string(collective_name(CollectiveKind::kBroadcast)) == "broadcast");
  CHECK(std::string(collective_name(CollectiveKind::kAllToAll)) == "all-to-all");
  CHECK(std::string(collective_name(CollectiveKind::kSendRecv)) == "send-recv");
  CHECK(std::string(algorithm_name(CollectiveAlgorithm::kTree)) == "tree");
  CHECK(std::string(link_name(LinkClass::kInterNode)) == "inter-node");
}

TEST_CASE("ring plans: the per-rank volume of a flat ring, every NCCL kind, n in {2,4,8,16}") {
  const ClusterSpec c = test_cluster();
  const Bytes s{1.0e9 + 12345.0};
  for (CollectiveKind kind : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                              CollectiveKind::kReduceScatter, CollectiveKind::kBroadcast}) {
    for (int n : {2, 4, 8, 16}) {
      CAPTURE(collective_name(kind));
      CAPTURE(n);
      // Inside one node when it fits, and one GPU per node: both are single-level.
      for (GroupPlacement p : {GroupPlacement{n, 1, n}, GroupPlacement{n, n, 1}}) {
        if (p.gpus_per_node_in_group > c.gpus_per_node) continue;
        const CollectivePlan plan = plan_collective(kind, CollectiveAlgorithm::kRing, s, p, c);
        CHECK(plan.algorithm == CollectiveAlgorithm::kRing);
        REQUIRE(plan.phases.size() == 1);
        const CollectivePhase& ph = plan.phases[0];
        CHECK(ph.link == (p.nodes_spanned == 1 ? LinkClass::kIntraNode : LinkClass::kInterNode));
        CHECK(rel_eq(ph.bytes_sent_per_rank.value, expected_fraction(kind, n) * s.value));
        CHECK(plan.message == s);
        CHECK(plan.kind == kind);
      }
    }
  }
}

TEST_CASE("send/recv and all-to-all: per-hop link latency, the fabric's share of the link") {
  const ClusterSpec c = test_cluster();
  const Bytes s{1e6};
  const CollectivePlan p2p = plan_collective(CollectiveKind::kSendRecv, s, {2, 2, 1}, c);
  REQUIRE(p2p.phases.size() == 1);
  CHECK(p2p.algorithm == CollectiveAlgorithm::kDirect);
  CHECK(p2p.protocol == CollectiveProtocol::kSimple);
  CHECK(p2p.phases[0].latency == c.intra_node.latency);
  CHECK(p2p.phases[0].link_efficiency == c.fabric.intra_node_efficiency);
  CHECK(rel_eq(p2p.phases[0].bytes_sent_per_rank.value, s.value));
  const CollectivePlan inter = plan_collective(CollectiveKind::kSendRecv, s, {2, 1, 2}, c);
  CHECK(inter.phases.at(0).link == LinkClass::kInterNode);
  CHECK(inter.phases[0].link_efficiency == c.fabric.inter_node_efficiency);
  CHECK(estimate_time(inter, c) ==
        c.inter_node.latency + s / (c.inter_node.bandwidth * c.fabric.inter_node_efficiency));
  // All-to-all: direct by default (one step), ring when asked (n - 1 steps).
  const GroupPlacement node{8, 8, 1};
  CHECK(plan_collective(CollectiveKind::kAllToAll, s, node, c).phases.at(0).steps == 1);
  CHECK(plan_collective(CollectiveKind::kAllToAll, CollectiveAlgorithm::kRing, s, node, c)
            .phases.at(0).steps == 7);
  const GroupPlacement p{32, 8, 4};
  const CollectivePlan a2a = plan_collective(CollectiveKind::kAllToAll, s, p, c);
  REQUIRE(a2a.phases.size() == 2);
  CHECK_FALSE(a2a.phases[0].concurrent_with_next);
  CHECK(rel_eq(bytes_sent_per_rank(a2a).value, 31.0 / 32.0 * s.value));
  CHECK(rel_eq(bytes_sent_per_rank(a2a, LinkClass::kInterNode).value, 3.0 / 4.0 * s.value));
}

TEST_CASE("group of size 1 is free") {
  const ClusterSpec c = test_cluster();
  for (CollectiveKind kind : kAllKinds) {
    const CollectivePlan plan = plan_collective(kind, Bytes{1e9}, GroupPlacement{1, 1, 1}, c);
    CHECK(plan.phases.empty());
    CHECK(estimate_time(plan, c) == sim::Time::zero());
  }
}

TEST_CASE("data-parallel all-reduce moves 2(n-1)/n of the gradient bytes per rank") {
  const ClusterSpec c = test_cluster();
  const Bytes grads{2.0 * 7.0e9};  // 7B parameters in bf16
  for (int n : {2, 4, 8, 16}) {
    CAPTURE(n);
    const CollectivePlan plan = plan_collective(
        CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, grads, GroupPlacement{n, 1, n}, c);
    CHECK(rel_eq(bytes_sent_per_rank(plan, LinkClass::kInterNode).value,
                 2.0 * (n - 1.0) / n * grads.value));
    CHECK(bytes_sent_per_rank(plan, LinkClass::kIntraNode).value == 0);
  }
}

TEST_CASE("ring over nodes: 1/g of the volume over the NIC, the rest over NVLink, concurrently") {
  const ClusterSpec c = test_cluster();
  const Bytes s{3.0e9};
  for (int g : {2, 4, 8}) {
    for (int nodes : {2, 4, 16}) {
      CAPTURE(g);
      CAPTURE(nodes);
      const double n = g * nodes;
      const GroupPlacement p{g * nodes, g, nodes};
      const CollectivePlan plan =
          plan_collective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, s, p, c);
      REQUIRE(plan.phases.size() == 2);
      CHECK(plan.phases[0].link == LinkClass::kInterNode);
      CHECK(plan.phases[0].concurrent_with_next);
      CHECK(plan.phases[1].link == LinkClass::kIntraNode);
      CHECK_FALSE(plan.phases[1].concurrent_with_next);
      const double volume = 2.0 * (n - 1) / n * s.value;
      CHECK(rel_eq(bytes_sent_per_rank(plan, LinkClass::kInterNode).value, volume / g));
      CHECK(rel_eq(bytes_sent_per_rank(plan, LinkClass::kIntraNode).value, volume * (g - 1) / g));
      CHECK(plan.phases[1].latency == sim::Time::zero());  // the first phase carries it
    }
  }
}

TEST_CASE("estimate_time: steps in sequence add up, concurrent phases take the slowest") {
  const ClusterSpec c = test_cluster();
  CollectivePlan plan{CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing,
                      CollectiveProtocol::kSimple, Bytes{1e9}, {}};
  CollectivePhase a;
  a.link = LinkClass::kInterNode;
  a.bytes_sent_per_rank = Bytes{1e9};  // 20 ms at 50 GB/s
  a.latency = sim::Time::us(10);
  CollectivePhase b;
  b.link = LinkClass::kIntraNode;
  b.bytes_sent_per_rank = Bytes{4.5e9};  // 10 ms at 450 GB/s
  b.latency = sim::Time::us(3);
  plan.phases = {a, b};
  CHECK(estimate_time(plan, c) == sim::Time::us(10 + 3) + sim::Time::ms(30));
  plan.phases[0].concurrent_with_next = true;
  CHECK(estimate_time(plan, c) == sim::Time::us(10 + 3) + sim::Time::ms(20));
  // Efficiency and a rate cap of delivered bytes.
  plan.phases[1].link_efficiency = 0.25;  // 40 ms
  CHECK(estimate_time(plan, c) == sim::Time::us(13) + sim::Time::ms(40));
  plan.phases[1].rate_cap = Bandwidth{90e9};  // 50 ms
  CHECK(estimate_time(plan, c) == sim::Time::us(13) + sim::Time::ms(50));
  plan.phases[1].link_efficiency = 0.0;
  CHECK_THROWS_AS(estimate_time(plan, c), std::invalid_argument);
}

TEST_CASE("busbw factors and algbw/busbw") {
  for (int n : {1, 2, 4, 8, 16}) {
    const double nd = n;
    // No .scale(0) here: n = 1 expects exactly 0, and a relative Approx of 0 fails even for 0.
    CHECK(busbw_factor(CollectiveKind::kAllReduce, n) == doctest::Approx(2 * (nd - 1) / nd));
    CHECK(busbw_factor(CollectiveKind::kAllGather, n) == doctest::Approx((nd - 1) / nd));
    CHECK(busbw_factor(CollectiveKind::kReduceScatter, n) == doctest::Approx((nd - 1) / nd));
    CHECK(busbw_factor(CollectiveKind::kAllToAll, n) == doctest::Approx((nd - 1) / nd));
    CHECK(busbw_factor(CollectiveKind::kBroadcast, n) == 1.0);
    CHECK(busbw_factor(CollectiveKind::kSendRecv, n) == 1.0);
  }
  CHECK_THROWS_AS(busbw_factor(CollectiveKind::kAllReduce, 0), std::invalid_argument);
  const Bytes s{1e9};
  const sim::Time t = sim::Time::ms(10);
  CHECK(algbw(s, t).bytes_per_s == doctest::Approx(100e9).scale(0));
  CHECK(busbw(CollectiveKind::kAllReduce, 8, s, t).bytes_per_s == doctest::Approx(175e9).scale(0));
  CHECK_THROWS_AS(algbw(s, sim::Time::zero()), std::invalid_argument);
  // An uncontended ring all-reduce of a large message inside a node reaches busbw ~ the achieved
  // share of the link.
  const ClusterSpec c = test_cluster();
  const Bytes big{8e9};
  const CollectivePlan plan = plan_collective(
      CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, big, GroupPlacement{8, 8, 1}, c);
  CHECK(busbw(CollectiveKind::kAllReduce, 8, big, estimate_time(plan, c)).bytes_per_s ==
        doctest::Approx(450e9 * c.fabric.intra_node_efficiency).epsilon(2e-3).scale(0));
}

TEST_CASE("invalid placements are rejected") {
  const ClusterSpec c = test_cluster();
  const Bytes s{1e6};
  CHECK_THROWS_AS(plan_collective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, s,
                                  GroupPlacement{8, 4, 1}, c),
                  std::invalid_argument);
  CHECK_THROWS_AS(plan_collective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, s,
                                  GroupPlacement{0, 0, 1}, c),
                  std::invalid_argument);
  CHECK_THROWS_AS(plan_collective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, Bytes{-1},
                                  GroupPlacement{2, 2, 1}, c),
                  std::invalid_argument);
}

TEST_CASE("fully connected mesh: a rank reaches min(1, peers x peer / bandwidth) of its links") {
  // 8 MI300X: 448 GB/s per GPU over 7 links of 64 GB/s (cluster_presets.cpp).
  ClusterSpec c = test_cluster();
  c.intra_node.bandwidth = Bandwidth{448e9};
  c.intra_node.peer_bandwidth = Bandwidth{64e9};
  const double e = c.fabric.intra_node_efficiency;
  const Bytes s{64e6};
  auto bytes_time = [&](CollectiveKind kind, const GroupPlacement& g) {
    const auto plan = plan_collective(kind, CollectiveAlgorithm::kRing, s, g, c);
    double t = estimate_time(plan, c).to_seconds();
    for (const auto& ph : plan.phases) t -= ph.latency.to_seconds();
    return t;
  };
  // Point-to-point: one link, 64 GB/s, whatever the node's total.
  CHECK(rel_eq(bytes_time(CollectiveKind::kSendRecv, {2, 2, 1}), 64e6 / (e * 64e9), 1e-9));
  // A pair's all-gather (Simple): one link; a group of 4: three; the whole node: all seven.
  const double big = 64e9;  // large enough for Simple
  const Bytes sb{big};
  auto simple_time = [&](const GroupPlacement& g) {
    const auto plan = plan_collective(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing, sb, g, c);
    REQUIRE(plan.protocol == CollectiveProtocol::kSimple);
    return estimate_time(plan, c).to_seconds() - plan.phases[0].latency.to_seconds();
  };
  CHECK(rel_eq(simple_time({2, 2, 1}), 0.5 * big / (e * 64e9), 1e-9));
  CHECK(rel_eq(simple_time({4, 4, 1}), 0.75 * big / (e * 192e9), 1e-9));
  CHECK(rel_eq(simple_time({8, 8, 1}), 7.0 / 8 * big / (e * 448e9), 1e-9));
  // Over nodes with 2 GPUs per node: the NVLink part's pace stays within one peer link.
  const auto plan = plan_collective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, s,
                                    {4, 2, 2}, c);
  REQUIRE(plan.phases.size() == 2);
  CHECK(plan.phases[1].link == LinkClass::kIntraNode);
  CHECK(plan.phases[1].rate_cap.bytes_per_s <= e * 64e9 * (1 + 1e-12));
  // Switched (no peer figure): unchanged.
  c.intra_node.peer_bandwidth = Bandwidth{};
  CHECK(rel_eq(bytes_time(CollectiveKind::kSendRecv, {2, 2, 1}), 64e6 / (e * 448e9), 1e-9));
}
