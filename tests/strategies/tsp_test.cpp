// TSP (arXiv 2604.26294): per-layer forward bytes per rank
// 4 B S h k + 32 h^2 k (bf16, SwiGLU with f = 4h, MHA, k = (D-1)/D), against Megatron TP's
// 8 B S h k and context parallelism's 4 B S h k; 1/D of the weights and activations per rank.
#include <doctest/doctest.h>

#include <cmath>

#include "costmodel/activation_memory.hpp"
#include "costmodel/cluster_presets.hpp"
#include "costmodel/cost_model.hpp"
#include "report/step_report.hpp"
#include "scenario_builder.hpp"
#include "sim/engine.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/workload/workload_builder.hpp"

using namespace parasim;

namespace {

strat::Scenario tsp_scenario(int d, int seq_len, strat::TpPlacement placement) {
  auto sc = test::small_scenario(1, d, 1, 1, 1, d);
  sc.model.hidden = 1024;
  sc.model.heads = 16;
  sc.model.kv_heads = 16;
  sc.model.ffn_hidden = 4 * 1024;
  sc.model.seq_len = seq_len;
  sc.training.attention = strat::AttentionKind::kFlash;
  sc.parallel.tp_placement = placement;
  return sc;
}

// Bytes one rank moves in a layer's forward: its share of each broadcast and all-gather
// ((D-1)/D of the message: the shards it does not own), every ring shift it takes part in, and
// nccl-tests' per-rank volume of an all-reduce.
double forward_bytes(const strat::LayerProgram& p, int d) {
  const double k = (d - 1.0) / d;
  double bytes = 0;
  for (const auto& s : p.forward) {
    if (!s.is_collective) continue;
    const double msg = s.collective.message.value;
    switch (s.collective.kind) {
      case cost::CollectiveKind::kBroadcast:
      case cost::CollectiveKind::kAllGather:
      case cost::CollectiveKind::kReduceScatter: bytes += msg * k; break;
      case cost::CollectiveKind::kAllReduce: bytes += 2 * msg * k; break;
      case cost::CollectiveKind::kSendRecv: bytes += msg; break;
      default: break;
    }
  }
  return bytes;
}

}  // namespace

TEST_CASE("TSP moves 4 B S h k + 32 h^2 k bytes per rank per layer forward; TP 8 B S h k") {
  for (int d : {2, 4, 8}) {
    for (int s : {4096, 16384}) {
      CAPTURE(d);
      CAPTURE(s);
      const auto tsp = tsp_scenario(d, s, strat::TpPlacement::kTsp);
      const cost::CostModel costs(tsp.cluster);
      const double h = 1024, B = 1, S = s, k = (d - 1.0) / d;
      CHECK(forward_bytes(strat::transformer_layer_program(tsp, costs), d) ==
            doctest::Approx(4 * B * S * h * k + 32 * h * h * k).epsilon(1e-12).scale(0));
      const auto tp = tsp_scenario(d, s, strat::TpPlacement::kMegatron);
      CHECK(forward_bytes(strat::transformer_layer_program(tp, costs), d) ==
            doctest::Approx(8 * B * S * h * k).epsilon(1e-12).scale(0));
    }
  }
}

TEST_CASE("TSP moves fewer bytes than TP exactly when B S > 8 h") {
  const int d = 8;
  const double h = 1024;
  for (int s : {static_cast<int>(8 * h) - 512, static_cast<int>(8 * h), static_cast<int>(8 * h) + 512}) {
    CAPTURE(s);
    const auto tsp = tsp_scenario(d, s, strat::TpPlacement::kTsp);
    const cost::CostModel costs(tsp.cluster);
    const double t = forward_bytes(strat::transformer_layer_program(tsp, costs), d);
    const double m = forward_bytes(
        strat::transformer_layer_program(tsp_scenario(d, s, strat::TpPlacement::kMegatron), costs),
        d);
    if (s > 8 * h) CHECK(t < m);
    if (s == 8 * h) CHECK(t == doctest::Approx(m).epsilon(1e-12).scale(0));
    if (s < 8 * h) CHECK(t > m);
  }
}

TEST_CASE("TSP holds 1/D of the activations and of the weight matrices per rank") {
  const int d = 8, s = 16384;
  auto one = tsp_scenario(1, s, strat::TpPlacement::kMegatron);
  const auto tsp = tsp_scenario(d, s, strat::TpPlacement::kTsp);
  const cost::CostModel costs(tsp.cluster);
  const auto p = strat::transformer_layer_program(tsp, costs);
  // Unsharded layer with FlashAttention: Korthikanti's selective figure for the whole sequence.
  const double unsharded =
      cost::activation_bytes_per_layer(strat::activation_shape(one), cost::Recompute::kSelective)
          .value;
  CHECK(p.activation_stored_bytes == doctest::Approx(unsharded / d).epsilon(1e-12).scale(0));
  // Transients beyond that: two K/V buckets (here one bucket per round: a head shard's K/V) and
  // two buffers of each weight shard.
  const double h = 1024, e = 2;
  const double kv = 2 * s * h / d * e, attn = 4 * h * h / d * e, mlp = 12 * h * h / d * e;
  CHECK(p.activation_full_bytes - p.activation_stored_bytes ==
        doctest::Approx(2 * kv + 2 * attn + 2 * mlp).epsilon(1e-12).scale(0));
  // Weights: every matrix / D; only the two norm scales (2h) stay whole.
  const double full = static_cast<double>(tsp.model.params_per_layer());
  CHECK(strat::layer_params_per_tp_rank(tsp.model, d) ==
        doctest::Approx(full / d + 2 * h * (1 - 1.0 / d)).scale(0));
}

TEST_CASE("TSP: symmetric and full simulation agree; weight transfers overlap compute") {
  auto sc = tsp_scenario(4, 16384, strat::TpPlacement::kTsp);
  sc.model.layers = 2;
  const auto sym = test::simulate_report(sc, false);
  const auto full = test::simulate_report(sc, true);
  CHECK(sym.step_time_s == full.step_time_s);
  // The weight stream runs beside the compute: less of the TP-group traffic is exposed than its
  // transfers take.
  double transfers = 0;
  for (const auto& c : sym.collectives) {
    if (c.kind == "tp") transfers += c.mean_time_s * c.count_per_gpu;
  }
  CHECK(sym.exposed_comm_s[static_cast<std::size_t>(strat::CommKind::kTensorParallel)] < transfers);
}

TEST_CASE("TSP with full recompute keeps only the layer input and reruns the forward's transfers") {
  auto sc = tsp_scenario(4, 16384, strat::TpPlacement::kTsp);
  const cost::CostModel costs(sc.cluster);
  const auto plain = strat::transformer_layer_program(sc, costs);
  sc.training.recompute = cost::Recompute::kFull;
  const auto full = strat::transformer_layer_program(sc, costs);
  const double T = 16384.0 / 4, h = 1024, e = 2;
  CHECK(full.activation_stored_bytes == T * h * e);  // Korthikanti's 2sbh: the layer input
  CHECK(full.activation_full_bytes == plain.activation_full_bytes);
  int plain_collectives = 0, full_collectives = 0, forward_collectives = 0;
  for (const auto& s : plain.backward) plain_collectives += s.is_collective;
  for (const auto& s : full.backward) full_collectives += s.is_collective;
  for (const auto& s : plain.forward) forward_collectives += s.is_collective;
  CHECK(full_collectives == plain_collectives + forward_collectives);
}

TEST_CASE("TSP's embedding and head pass their vocabulary shards on a ring") {
  // R = ceil(V/D) h e bytes per shard (tsp_vocab.hpp): embedding forward (D-1) R, backward D R
  // (gradients only); head forward (D-1) R, backward (D-1) R of weights and D R of gradients.
  for (int d : {2, 4, 8}) {
    CAPTURE(d);
    auto sc = tsp_scenario(d, 16384, strat::TpPlacement::kTsp);
    sc.model.vocab = 32003;  // not a multiple of D: shards are padded to ceil(V/D) rows
    const cost::CostModel costs(sc.cluster);
    const double h = 1024, e = 2, rows = std::ceil(32003.0 / d), R = rows * h * e;
    auto sends = [](const std::vector<strat::LayerStep>& steps) {
      double bytes = 0;
      for (const auto& s : steps) {
        if (s.is_collective) {
          CHECK(s.collective.kind == cost::CollectiveKind::kSendRecv);
          CHECK(s.group == strat::StepGroup::kWeights);
          bytes += s.collective.message.value;
        }
      }
      return bytes;
    };
    const auto embed = strat::embedding_program(sc, costs);
    CHECK(sends(embed.forward) == (d - 1) * R);
    CHECK(sends(embed.backward) == d * R);
    const auto head = strat::head_program(sc, costs);
    CHECK(sends(head.forward) == (d - 1) * R);
    CHECK(sends(head.backward) == (2 * d - 1) * R);
    // The rank's T = S/D tokens meet every padded row once: 2 T rows D h FLOPs forward.
    double flops = 0;
    for (const auto& s : head.forward) flops += s.is_collective ? 0 : s.compute.flops.value;
    const double T = 16384.0 / d;
    CHECK(flops == doctest::Approx(2 * T * rows * d * h).epsilon(1e-12).scale(0));
  }
}

TEST_CASE("On a fully connected mesh TSP's ring steps cross the pair's own link") {
  // 8 MI300X: 64 GB/s between any two GPUs (one xGMI link), 448 GB/s per GPU in all.
  auto sc = tsp_scenario(8, 16384, strat::TpPlacement::kTsp);
  sc.model.layers = 1;
  sc.cluster = cost::find_cluster_preset("mi300x-8x")->spec;
  const cost::CostModel costs(sc.cluster);
  auto peer_links = [&](const strat::Scenario& s, bool full) {
    const auto built = strat::build_workload(s, costs, {full});
    std::vector<double> caps;
    for (sim::LinkId l = 0; l < built.workload.link_count(); ++l) {
      const auto& link = built.workload.link(l);
      if (link.name.find(".peer") != std::string::npos) caps.push_back(link.bytes_per_s);
    }
    return caps;
  };
  const auto sym = peer_links(sc, false);
  REQUIRE(sym.size() == 1);  // the one simulated rank to its successor
  CHECK(sym[0] == 64e9);
  const auto full = peer_links(sc, true);
  CHECK(full.size() == 8);  // each rank to its ring successor
  // A ring step moves a weight shard at the achieved share of 64 GB/s plus the 1 us hop latency
  // (about 2 % of a 3 MB shard's 60 us), not at the 448 GB/s of the GPU's port.
  const auto report = test::simulate_report(sc, false);
  bool found = false;
  for (const auto& c : report.collectives) {
    if (c.op != "send-recv") continue;
    found = true;
    CHECK(c.mean_message_bytes / c.mean_time_s ==
          doctest::Approx(64e9 * sc.cluster.fabric.intra_node_efficiency).epsilon(0.03));
  }
  CHECK(found);
  // A switched fabric has no pair links.
  sc.cluster = cost::find_cluster_preset("dgx-h100")->spec;
  const cost::CostModel switched(sc.cluster);
  const auto none = strat::build_workload(sc, switched, {false});
  for (sim::LinkId l = 0; l < none.workload.link_count(); ++l) {
    CHECK(none.workload.link(l).name.find(".peer") == std::string::npos);
  }
}

TEST_CASE("TSP head bucketing: same bytes, B x D K/V gathers, 1/B of the K/V held") {
  const int d = 4, s = 16384;
  const double h = 1024, e = 2;
  auto sc = tsp_scenario(d, s, strat::TpPlacement::kTsp);  // 16 kv heads: 4 per round
  const cost::CostModel costs(sc.cluster);
  const auto one = strat::transformer_layer_program(sc, costs);
  for (int buckets : {2, 4}) {
    CAPTURE(buckets);
    sc.parallel.tsp_kv_buckets = buckets;
    const auto p = strat::transformer_layer_program(sc, costs);
    CHECK(forward_bytes(p, d) == doctest::Approx(forward_bytes(one, d)).epsilon(1e-12).scale(0));
    int gathers = 0;
    for (const auto& step : p.forward) {
      gathers += step.is_collective && step.collective.kind == cost::CollectiveKind::kAllGather;
    }
    CHECK(gathers == d * buckets);
    // Two buckets' K/V (2 x 2 s h / D / B elements) instead of two head shards'.
    const double kv_bucket = 2 * s * h / d / buckets * e;
    CHECK(p.activation_full_bytes - p.activation_stored_bytes ==
          doctest::Approx(2 * kv_bucket + 2 * (4 * h * h / d * e) + 2 * (12 * h * h / d * e))
              .epsilon(1e-12)
              .scale(0));
    // The attention FLOPs do not change; only the kernel count does.
    double f1 = 0, fb = 0;
    for (const auto& x : one.forward) f1 += x.is_collective ? 0 : x.compute.flops.value;
    for (const auto& x : p.forward) fb += x.is_collective ? 0 : x.compute.flops.value;
    CHECK(fb == doctest::Approx(f1).epsilon(1e-12).scale(0));
  }
  // kv_heads (16) must be a multiple of tp x buckets; buckets need TSP.
  sc.parallel.tsp_kv_buckets = 8;  // 4 x 8 = 32
  cost::Diagnostics bad("t.json");
  strat::check_scenario(sc, bad);
  CHECK(bad.to_string().find("/parallel/tsp_kv_buckets") != std::string::npos);
  auto tp = tsp_scenario(d, s, strat::TpPlacement::kMegatron);
  tp.parallel.tsp_kv_buckets = 2;
  cost::Diagnostics not_tsp("t.json");
  strat::check_scenario(tp, not_tsp);
  CHECK(not_tsp.to_string().find("applies to \"tp_placement\": \"tsp\" only") != std::string::npos);
}
