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
  CHECK(std::string(collective_name(CollectiveKind::kAllReduce)) == "all-reduce");
  CHECK(std::string(collective_name(CollectiveKind::kAllGather)) == "all-gather");
  CHECK(std::string(collective_name(CollectiveKind::kReduceScatter)) == "reduce-scatter");
  CHECK(std::string(collective_name(CollectiveKind::kBroadcast)) == "broadcast");
  CHECK(std::string(collective_name(CollectiveKind::kAllToAll)) == "all-to-all");
  CHECK(std::string(collective_name(CollectiveKind::kSendRecv)) == "send-recv");
  CHECK(std::string(algorithm_name(CollectiveAlgorithm::kTree)) == "tree");
  CHECK(std::string(link_name(LinkClass::kInterNode)) == "inter-node");
}

TEST_CASE("flat ring per-rank volumes, every kind, n in {2,4,8,16}") {
  const ClusterSpec c = test_cluster();
  const Bytes s{1.0e9 + 12345.0};
  for (CollectiveKind kind : kAllKinds) {
    for (int n : {2, 4, 8, 16}) {
      CAPTURE(collective_name(kind));
      CAPTURE(n);
      // Inside one node when it fits, and one GPU per node: both are single-level.
      for (GroupPlacement p : {GroupPlacement{n, 1, n}, GroupPlacement{n, n, 1}}) {
        if (p.gpus_per_node_in_group > c.gpus_per_node) continue;
        const CollectivePlan plan = plan_collective(kind, CollectiveAlgorithm::kRing, s, p, c);
        REQUIRE(plan.phases.size() == 1);
        const CollectivePhase& ph = plan.phases[0];
        CHECK(ph.link == (p.nodes_spanned == 1 ? LinkClass::kIntraNode : LinkClass::kInterNode));
        CHECK(rel_eq(ph.bytes_sent_per_rank.value, expected_fraction(kind, n) * s.value));
        CHECK(rel_eq(ph.bytes_sent_per_rank.value, busbw_factor(kind, n) * s.value));
        CHECK(plan.message == s);
        CHECK(plan.kind == kind);
      }
    }
  }
}

TEST_CASE("ring latency steps") {
  const ClusterSpec c = test_cluster();
  const Bytes s{1e6};
  const GroupPlacement p{8, 8, 1};
  auto steps = [&](CollectiveKind k, CollectiveAlgorithm a) {
    return plan_collective(k, a, s, p, c).phases.at(0).steps;
  };
  CHECK(steps(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing) == 14);
  CHECK(steps(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing) == 7);
  CHECK(steps(CollectiveKind::kReduceScatter, CollectiveAlgorithm::kRing) == 7);
  CHECK(steps(CollectiveKind::kBroadcast, CollectiveAlgorithm::kRing) == 7);
  CHECK(steps(CollectiveKind::kAllToAll, CollectiveAlgorithm::kDirect) == 1);
  CHECK(steps(CollectiveKind::kSendRecv, CollectiveAlgorithm::kRing) == 1);
  const CollectivePlan plan =
      plan_collective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, s, p, c);
  CHECK(plan.phases[0].latency == c.intra_node.latency * 14);
}

TEST_CASE("tree all-reduce: 2 ceil(log2 n) steps, ring bandwidth term") {
  const ClusterSpec c = test_cluster();
  const Bytes s{64e6};
  for (int n : {2, 3, 8, 16}) {
    CAPTURE(n);
    const CollectivePlan plan = plan_collective(
        CollectiveKind::kAllReduce, CollectiveAlgorithm::kTree, s, GroupPlacement{n, 1, n}, c);
    REQUIRE(plan.phases.size() == 1);
    const int log2n = static_cast<int>(std::ceil(std::log2(n)));
    CHECK(plan.phases[0].steps == 2 * log2n);
    CHECK(plan.phases[0].latency == c.inter_node.latency * (2 * log2n));
    CHECK(rel_eq(plan.phases[0].bytes_sent_per_rank.value, 2.0 * (n - 1.0) / n * s.value));
  }
  // Tree is all-reduce only: other kinds fall back to ring and say so.
  const CollectivePlan ag = plan_collective(CollectiveKind::kAllGather, CollectiveAlgorithm::kTree,
                                            s, GroupPlacement{8, 8, 1}, c);
  CHECK(ag.algorithm == CollectiveAlgorithm::kRing);
  CHECK(ag.phases.at(0).steps == 7);
}

TEST_CASE("group of size 1 is free") {
  const ClusterSpec c = test_cluster();
  for (CollectiveKind kind : kAllKinds) {
    const CollectivePlan plan =
        plan_collective(kind, CollectiveAlgorithm::kRing, Bytes{1e9}, GroupPlacement{1, 1, 1}, c);
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

TEST_CASE("hierarchical all-reduce: intra RS, inter AR of S/g, intra AG") {
  const ClusterSpec c = test_cluster();
  const Bytes s{3.0e9};
  for (int g : {2, 4, 8}) {
    for (int nodes : {2, 4, 16}) {
      CAPTURE(g);
      CAPTURE(nodes);
      const GroupPlacement p{g * nodes, g, nodes};
      const CollectivePlan plan =
          plan_collective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, s, p, c);
      REQUIRE(plan.phases.size() == 3);
      const double gd = g;
      const double nd = nodes;
      CHECK(plan.phases[0].link == LinkClass::kIntraNode);
      CHECK(rel_eq(plan.phases[0].bytes_sent_per_rank.value, (gd - 1) / gd * s.value));
      CHECK(plan.phases[0].steps == g - 1);
      CHECK(plan.phases[1].link == LinkClass::kInterNode);
      CHECK(plan.phases[1].steps == 2 * (nodes - 1));
      CHECK(plan.phases[2].link == LinkClass::kIntraNode);
      CHECK(rel_eq(plan.phases[2].bytes_sent_per_rank.value, (gd - 1) / gd * s.value));
      CHECK(rel_eq(bytes_sent_per_rank(plan, LinkClass::kInterNode).value,
                   2.0 * (nd - 1) / nd * s.value / gd));
      CHECK(rel_eq(bytes_sent_per_rank(plan, LinkClass::kIntraNode).value,
                   2.0 * (gd - 1) / gd * s.value));
    }
  }
}

TEST_CASE("hierarchical all-gather, reduce-scatter, all-to-all keep the flat total") {
  const ClusterSpec c = test_cluster();
  const Bytes s{1.0e9};
  const int g = 8;
  const int nodes = 4;
  const double n = g * nodes;
  const GroupPlacement p{g * nodes, g, nodes};
  for (CollectiveKind kind :
       {CollectiveKind::kAllGather, CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll}) {
    CAPTURE(collective_name(kind));
    const CollectivePlan plan = plan_collective(kind, CollectiveAlgorithm::kRing, s, p, c);
    REQUIRE(plan.phases.size() == 2);
    CHECK(rel_eq(bytes_sent_per_rank(plan).value, (n - 1) / n * s.value));
  }
  const CollectivePlan ag =
      plan_collective(CollectiveKind::kAllGather, CollectiveAlgorithm::kRing, s, p, c);
  CHECK(ag.phases[0].link == LinkClass::kInterNode);  // small slice over the slow link first
  CHECK(rel_eq(bytes_sent_per_rank(ag, LinkClass::kInterNode).value, 3.0 / 4.0 * s.value / 8.0));
  const CollectivePlan rs =
      plan_collective(CollectiveKind::kReduceScatter, CollectiveAlgorithm::kRing, s, p, c);
  CHECK(rs.phases[0].link == LinkClass::kIntraNode);  // reduce inside the node first
  CHECK(rel_eq(bytes_sent_per_rank(rs, LinkClass::kInterNode).value, 3.0 / 4.0 * s.value / 8.0));
  const CollectivePlan a2a =
      plan_collective(CollectiveKind::kAllToAll, CollectiveAlgorithm::kDirect, s, p, c);
  CHECK(rel_eq(bytes_sent_per_rank(a2a, LinkClass::kInterNode).value, 3.0 / 4.0 * s.value));
  CHECK(a2a.phases[0].steps == 1);
  CHECK(a2a.phases[1].steps == 1);
}

TEST_CASE("estimate_time of a single-phase ring all-reduce") {
  const ClusterSpec c = test_cluster();
  const Bytes s{256.0 * 1024 * 1024};
  for (int n : {2, 4, 8}) {
    CAPTURE(n);
    const CollectivePlan plan = plan_collective(
        CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, s, GroupPlacement{n, n, 1}, c);
    const double want_s = 2.0 * (n - 1) * c.intra_node.latency.to_seconds() +
                          2.0 * (n - 1.0) / n * s.value / c.intra_node.bandwidth.bytes_per_s;
    const sim::Time got = estimate_time(plan, c);
    CHECK(std::abs((got - sim::Time::seconds(want_s)).picoseconds()) <= 1);
  }
}

TEST_CASE("estimate_time sums the phases of a hierarchical all-reduce") {
  const ClusterSpec c = test_cluster();
  const Bytes s{1e9};
  const CollectivePlan plan = plan_collective(
      CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, s, GroupPlacement{32, 8, 4}, c);
  const double intra = 2.0 * 7.0 / 8.0 * s.value / 450e9 + 2 * 7 * 0.6e-6;
  const double inter = 2.0 * 3.0 / 4.0 * s.value / 8.0 / 50e9 + 2 * 3 * 2.7e-6;
  const sim::Time diff = estimate_time(plan, c) - sim::Time::seconds(intra + inter);
  CHECK(std::abs(diff.picoseconds()) <= 3);
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
  // An uncontended single-level ring all-reduce of a large message reaches busbw ~ link peak.
  const ClusterSpec c = test_cluster();
  const Bytes big{8e9};
  const CollectivePlan plan = plan_collective(
      CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, big, GroupPlacement{8, 8, 1}, c);
  CHECK(busbw(CollectiveKind::kAllReduce, 8, big, estimate_time(plan, c)).bytes_per_s ==
        doctest::Approx(450e9).epsilon(1e-3).scale(0));
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
  const Bytes s{64e6};
  auto bytes_time = [&](CollectiveKind kind, const GroupPlacement& g) {
    const auto plan = plan_collective(kind, CollectiveAlgorithm::kRing, s, g, c);
    double t = estimate_time(plan, c).to_seconds();
    for (const auto& ph : plan.phases) t -= ph.latency.to_seconds();
    return t;
  };
  // Point-to-point: one link, 64 GB/s, whatever the node's total.
  CHECK(rel_eq(bytes_time(CollectiveKind::kSendRecv, {2, 2, 1}), 64e6 / 64e9, 1e-9));
  // A pair's all-gather: one link; a group of 4: three; the whole node: all seven (= 448 GB/s).
  CHECK(rel_eq(bytes_time(CollectiveKind::kAllGather, {2, 2, 1}), 0.5 * 64e6 / 64e9, 1e-9));
  CHECK(rel_eq(bytes_time(CollectiveKind::kAllGather, {4, 4, 1}), 0.75 * 64e6 / 192e9, 1e-9));
  CHECK(rel_eq(bytes_time(CollectiveKind::kAllGather, {8, 8, 1}), 7.0 / 8 * 64e6 / 448e9, 1e-9));
  // Hierarchical: the intra phases of 2 GPUs per node use one link; the NIC phase is unchanged.
  const auto plan = plan_collective(CollectiveKind::kAllReduce, CollectiveAlgorithm::kRing, s,
                                    {4, 2, 2}, c);
  REQUIRE(plan.phases.size() == 3);
  CHECK(plan.phases[0].rate_cap.bytes_per_s == 64e9);
  CHECK(plan.phases[1].rate_cap.bytes_per_s == 0);
  CHECK(plan.phases[2].rate_cap.bytes_per_s == 64e9);
  for (const auto& ph : plan.phases) CHECK(ph.link_efficiency == 1.0);
  // Switched (no peer figure): unchanged.
  c.intra_node.peer_bandwidth = Bandwidth{};
  CHECK(rel_eq(bytes_time(CollectiveKind::kSendRecv, {2, 2, 1}), 64e6 / 448e9, 1e-9));
}
