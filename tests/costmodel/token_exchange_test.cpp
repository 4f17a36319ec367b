#include "costmodel/token_exchange.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "costmodel/cluster_presets.hpp"

using namespace parasim::cost;

namespace {

bool rel_eq(double got, double want, double tol) {
  return std::abs(got - want) <= tol * std::abs(want);
}

// C(n, k) as a double, for the hand computations.
double choose(int n, int k) {
  double c = 1;
  for (int i = 0; i < k; ++i) c = c * (n - i) / (i + 1);
  return c;
}

const ClusterSpec& h800() { return find_cluster_preset("dgx-h800")->spec; }

}  // namespace

TEST_CASE("a token reaches a bucket of e experts with 1 - C(E-e, k) / C(E, k)") {
  CHECK(token_hit_probability(8, 2, 1) == doctest::Approx(1 - choose(7, 2) / choose(8, 2)));
  CHECK(token_hit_probability(256, 8, 32) ==
        doctest::Approx(1 - choose(224, 8) / choose(256, 8)).epsilon(1e-12));
  CHECK(token_hit_probability(256, 8, 4) ==
        doctest::Approx(1 - choose(252, 8) / choose(256, 8)).epsilon(1e-12));
  CHECK(token_hit_probability(8, 2, 8) == 1);  // the bucket holds every expert
  CHECK(token_hit_probability(8, 2, 7) == 1);  // fewer than k experts left outside it
  CHECK(token_hit_probability(8, 2, 0) == 0);
  CHECK_THROWS_AS(token_hit_probability(8, 9, 1), std::invalid_argument);
  CHECK_THROWS_AS(token_hit_probability(8, 2, 9), std::invalid_argument);
}

TEST_CASE("DeepSeek-V3's dispatch over 64 ranks on 8 nodes: each token once per target node") {
  // 256 experts, top-8, ep 64 (4 experts a rank, 32 a node), 4096 tokens of 7168 bf16 values.
  const TokenExchange x{.tokens = 4096, .bytes_per_token = 7168 * 2, .experts = 256, .top_k = 8,
                        .ep = 64, .etp = 1, .rank_factor = 1};
  const TokenTraffic t = token_traffic(x, GroupPlacement{64, 8, 8});
  const double rank_hit = 1 - choose(252, 8) / choose(256, 8);
  const double node_hit = 1 - choose(224, 8) / choose(256, 8);
  CHECK(t.rank_hit == doctest::Approx(rank_hit).epsilon(1e-12));
  CHECK(t.node_hit == doctest::Approx(node_hit).epsilon(1e-12));
  CHECK(t.nic_per_rank.value == doctest::Approx(4096.0 * 14336 * 7 * node_hit).epsilon(1e-12));
  CHECK(t.nvlink_per_rank.value == doctest::Approx(4096.0 * 14336 * 56 * rank_hit).epsilon(1e-12));
  CHECK(t.received_tokens == doctest::Approx(64 * rank_hit * 4096).epsilon(1e-12));
  // Fewer NIC bytes than an NCCL all-to-all of the k copies sends off the node, (N-1)/N of
  // T k h e: the deduplication per node.
  CHECK(t.nic_per_rank.value < 4096.0 * 8 * 14336 * 7 / 8);
  // The busiest rank's factor scales both parts.
  TokenExchange skewed = x;
  skewed.rank_factor = 1.25;
  const TokenTraffic s = token_traffic(skewed, GroupPlacement{64, 8, 8});
  CHECK(s.nic_per_rank.value == doctest::Approx(1.25 * t.nic_per_rank.value));
  CHECK(s.nvlink_per_rank.value == doctest::Approx(1.25 * t.nvlink_per_rank.value));
}

TEST_CASE("inside one node every other target rank is reached over NVLink") {
  const TokenExchange x{.tokens = 1000, .bytes_per_token = 100, .experts = 8, .top_k = 2,
                        .ep = 8, .etp = 1, .rank_factor = 1};
  const TokenTraffic t = token_traffic(x, GroupPlacement{8, 8, 1});
  CHECK(t.node_hit == 0);
  CHECK(t.nic_per_rank.value == 0);
  CHECK(t.nvlink_per_rank.value == doctest::Approx(1000.0 * 100 * 7 * 0.25));  // hit(1) = 2/8
  const CollectivePlan plan = plan_token_exchange(x, GroupPlacement{8, 8, 1}, h800());
  REQUIRE(plan.phases.size() == 1);
  CHECK(plan.phases[0].link == LinkClass::kIntraNode);
  CHECK(plan.phases[0].bytes_sent_per_rank.value == doctest::Approx(t.nvlink_per_rank.value));
  // With expert tensor parallelism each expert's etp shards all receive the token.
  const TokenExchange sharded{.tokens = 1000, .bytes_per_token = 100, .experts = 8, .top_k = 2,
                              .ep = 4, .etp = 2, .rank_factor = 1};
  const TokenTraffic ts = token_traffic(sharded, GroupPlacement{8, 8, 1});
  CHECK(ts.rank_hit == doctest::Approx(1 - choose(6, 2) / choose(8, 2)));
  CHECK_THROWS_AS(token_traffic(sharded, GroupPlacement{4, 4, 1}), std::invalid_argument);
}

TEST_CASE("the exchange is one step: the NIC part and the NVLink part at once") {
  const TokenExchange x{.tokens = 4096, .bytes_per_token = 7168 * 2, .experts = 256, .top_k = 8,
                        .ep = 64, .etp = 1, .rank_factor = 1};
  const GroupPlacement group{64, 8, 8};
  const CollectivePlan plan = plan_token_exchange(x, group, h800());
  REQUIRE(plan.phases.size() == 2);
  CHECK(plan.phases[0].link == LinkClass::kInterNode);
  CHECK(plan.phases[0].concurrent_with_next);
  CHECK(plan.phases[1].link == LinkClass::kIntraNode);
  const TokenTraffic t = token_traffic(x, group);
  const ClusterSpec& c = h800();
  const double nic_s = t.nic_per_rank.value /
                       (c.inter_node.bandwidth.bytes_per_s * c.fabric.inter_node_efficiency);
  const double nvl_s = t.nvlink_per_rank.value /
                       (c.intra_node.bandwidth.bytes_per_s * c.fabric.intra_node_efficiency);
  const double latency = (c.inter_node.latency + c.intra_node.latency).to_seconds();
  CHECK(estimate_time(plan, c).to_seconds() ==
        doctest::Approx(latency + std::max(nic_s, nvl_s)).epsilon(1e-9));
  CHECK(nic_s > nvl_s);  // 50 GB/s NICs bound DeepSeek-V3's dispatch, as its report says
  TokenExchange alone = x;
  alone.ep = 1;
  CHECK(plan_token_exchange(alone, GroupPlacement{1, 1, 1}, c).phases.empty());
}

TEST_CASE("the fabric shares the plan uses sit in DeepEP's published bandwidth range") {
  // DeepEP README @ 567632d on H800: 153 GB/s NVLink intranode (EP 8), 43-58 GB/s RDMA
  // internode (EP 16-64), "bottleneck bandwidth".
  const ClusterSpec& c = h800();
  const double nvl = c.intra_node.bandwidth.bytes_per_s * c.fabric.intra_node_efficiency / 1e9;
  const double nic = c.inter_node.bandwidth.bytes_per_s * c.fabric.inter_node_efficiency / 1e9;
  CAPTURE(nvl);
  CAPTURE(nic);
  CHECK(nvl >= 0.85 * 153);
  CHECK(nvl <= 1.15 * 158);
  CHECK(nic >= 0.85 * 43);
  CHECK(nic <= 58);
}

TEST_CASE("DeepEP's buffers follow config.hpp's size hints") {
  // EP 8, hidden 7168 bf16, 20 SMs = 10 channels, 256 receive tokens per channel and peer.
  const double per_token = 14336 + 8 + 128 * 8 + 128 * 4 + 128 * 4;
  const double nvl8 = std::ceil((10 * 8 * 5 * 4 + 10 * 8 * 256 * per_token) / 128) * 128;
  const double workspace = 32.0 * 1024 * 1024;  // the Buffer's own (deep_ep.cpp)
  CHECK(deepep_buffer_bytes(14336, 8).value == doctest::Approx(nvl8 + workspace).epsilon(1e-15));
  CHECK(rel_eq(nvl8, 320.0 * 1024 * 1024, 0.01));  // ~320 MiB
  // EP 64 over 8 nodes: 288 receive tokens over NVLink; RDMA 128 rounded up to a multiple of
  // the send chunk (8: 128), twice, for 8 RDMA ranks, plus 1 MiB.
  const double nvl64 = std::ceil((10 * 8 * 19 * 4 + 10 * 8 * 288 * per_token) / 128) * 128;
  const double rdma64 =
      std::ceil((10 * 8 * 18 * 2 * 4 + 10 * 8 * 128 * 2 * (per_token + 16) + 1048576) / 128) * 128;
  CHECK(deepep_buffer_bytes(14336, 64).value ==
        doctest::Approx(nvl64 + rdma64 + workspace).epsilon(1e-15));
  // EP 16's dispatch sends RDMA chunks of 20: 128 -> 140 receive tokens.
  const double rdma16 =
      std::ceil((10 * 2 * 18 * 2 * 4 + 10 * 2 * 140 * 2 * (per_token + 16) + 1048576) / 128) * 128;
  const double nvl16 = std::ceil((10 * 8 * 7 * 4 + 10 * 8 * 288 * per_token) / 128) * 128;
  CHECK(deepep_buffer_bytes(14336, 16).value ==
        doctest::Approx(nvl16 + rdma16 + workspace).epsilon(1e-15));
  CHECK(deepep_buffer_bytes(14336, 1).value == 0);
  CHECK_THROWS_AS(deepep_buffer_bytes(14336, 12), std::invalid_argument);
  CHECK_THROWS_AS(deepep_buffer_bytes(14336, 8, 21), std::invalid_argument);
}
