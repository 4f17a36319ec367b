#include "costmodel/fat_tree.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

#include "costmodel/cluster_presets.hpp"

namespace parasim::cost {

TEST_CASE("a group inside one leaf, or no fat tree, keeps its whole rate") {
  CHECK(spine_crossing_load(SpinePattern::kUniform, 16, 16) == 0);
  CHECK(spine_crossing_load(SpinePattern::kTree, 3, 16) == 0);
  CHECK(spine_share(SpinePattern::kUniform, 16, FatTree{16, 4}) == 1);
  CHECK(spine_share(SpinePattern::kUniform, 1024, FatTree{}) == 1);
  CHECK_THROWS_AS(spine_crossing_load(SpinePattern::kRing, 0, 16), std::invalid_argument);
  CHECK_THROWS_AS(spine_crossing_load(SpinePattern::kRing, 4, 0), std::invalid_argument);
}

TEST_CASE("rings send one flow per rail out of a leaf: they slow only when R exceeds L") {
  CHECK(spine_crossing_load(SpinePattern::kRing, 64, 16) == 1);
  CHECK(spine_share(SpinePattern::kRing, 64, FatTree{16, 4}) == 1);
  CHECK(spine_share(SpinePattern::kRing, 64, FatTree{16, 32}) == 0.5);  // 16 / (32 x 1)
  CHECK(spine_share(SpinePattern::kRing, 3, FatTree{2, 4}) == 0.5);
}

TEST_CASE("uniform all-to-all keeps (N - 1) / (R (N - L)) over full leaves") {
  // c = L (N - L) / (N - 1); share = L / (R c).
  CHECK(spine_crossing_load(SpinePattern::kUniform, 64, 16) == doctest::Approx(16.0 * 48 / 63));
  CHECK(spine_share(SpinePattern::kUniform, 64, FatTree{16, 2}) ==
        doctest::Approx(63.0 / (2 * 48)));
  CHECK(spine_share(SpinePattern::kUniform, 32, FatTree{16, 4}) ==
        doctest::Approx(31.0 / (4 * 16)));
  // Large N: the share tends to 1 / R.
  CHECK(spine_share(SpinePattern::kUniform, 16384, FatTree{32, 3}) ==
        doctest::Approx(16383.0 / (3 * 16352)));
  // One node past a leaf: 16 nodes talk to 1, which takes 1/16 of each: c = 16 x 1 / 16.
  CHECK(spine_crossing_load(SpinePattern::kUniform, 17, 16) == doctest::Approx(1.0));
  CHECK(spine_share(SpinePattern::kUniform, 17, FatTree{16, 2}) == 1);
}

TEST_CASE("NCCL's double binary tree: crossing edges of both trees, a quarter flow each") {
  // 4 nodes, leaves {0, 1} and {2, 3}. First tree: 1 -> 2, 2 -> 0, 3 -> 2 (two cross). Second
  // (mirrored): 0 -> 1, 1 -> 3, 2 -> 1 (two cross). Each leaf meets all four crossing edges.
  CHECK(spine_crossing_load(SpinePattern::kTree, 4, 2) == 1.0);
  CHECK(spine_share(SpinePattern::kTree, 4, FatTree{2, 4}) == 0.5);
  CHECK(spine_share(SpinePattern::kTree, 4, FatTree{2, 2}) == 1.0);
  // Odd n: the second tree is the first shifted by one; the loads stay positive and finite.
  const double odd = spine_crossing_load(SpinePattern::kTree, 9, 4);
  CHECK(odd > 0);
  CHECK(odd <= 9.0);
}

TEST_CASE("plans pay the spine on their inter-node phases, exactly by the share") {
  ClusterSpec flat = find_cluster_preset("dgx-h100")->spec;
  flat.nodes = 64;
  ClusterSpec tree = flat;
  tree.network = FatTree{16, 2};
  const GroupPlacement rail{64, 1, 64};  // one GPU per node: a data-parallel group on one rail
  const Bytes s{1e9};
  const CollectivePlan a2a_flat = plan_collective(CollectiveKind::kAllToAll, s, rail, flat);
  const CollectivePlan a2a = plan_collective(CollectiveKind::kAllToAll, s, rail, tree);
  REQUIRE(a2a.phases.size() == 1);
  const CollectivePhase& ph = a2a.phases[0];
  CHECK(ph.link == LinkClass::kInterNode);
  CHECK(ph.rate_cap.bytes_per_s ==
        doctest::Approx(50e9 * ph.link_efficiency * 63.0 / (2 * 48)));
  const sim::Time lat = ph.latency;
  CHECK((estimate_time(a2a, tree) - lat).to_seconds() ==
        doctest::Approx((estimate_time(a2a_flat, flat) - lat).to_seconds() * (2 * 48) / 63.0));
  // A ring all-gather on the same rail: R = 2 < L = 16, unchanged.
  const CollectivePlan ag_flat = plan_collective(CollectiveKind::kAllGather, s, rail, flat);
  const CollectivePlan ag = plan_collective(CollectiveKind::kAllGather, s, rail, tree);
  CHECK(estimate_time(ag, tree) == estimate_time(ag_flat, flat));
  // A group inside one leaf: unchanged.
  const GroupPlacement small{16, 1, 16};
  CHECK(estimate_time(plan_collective(CollectiveKind::kAllToAll, s, small, tree), tree) ==
        estimate_time(plan_collective(CollectiveKind::kAllToAll, s, small, flat), flat));
}

}  // namespace parasim::cost
