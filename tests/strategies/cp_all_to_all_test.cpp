// Context parallelism by all-to-all (strategies/layers/cp_attention.hpp): DeepSpeed-Ulysses
// ("a2a", Jacobs et al. 2023, arXiv 2309.14509) and Megatron's hierarchical a2a+p2p. Bytes per
// layer against a hand count, the heads rule, the subgroups, and the builder's full simulation.
#include <doctest/doctest.h>

#include <string>

#include "costmodel/cost_model.hpp"
#include "costmodel/diagnostics.hpp"
#include "report/step_report.hpp"
#include "scenario_builder.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/workload/rank_layout.hpp"

using namespace parasim;
using strat::CpComm;
using strat::StepGroup;

namespace {

// Llama-style GQA layer: 32 heads of 128, 8 K/V heads; tp 2, cp 4 (one K/V head per cp rank).
strat::Scenario gqa_scenario(CpComm comm, int cp = 4, int a2a = 0, int dp = 1) {
  auto sc = test::small_scenario(2 * dp * cp, 1, 1, 2 * dp, 1);
  sc.parallel.dp = dp;
  sc.parallel.tp = 2;
  sc.parallel.cp = cp;
  sc.parallel.cp_comm = comm;
  sc.parallel.cp_a2a_size = a2a;
  sc.parallel.sequence_parallel = true;
  sc.model.heads = 32;
  sc.model.kv_heads = 8;
  sc.model.seq_len = 8192;
  sc.training.attention = strat::AttentionKind::kFlash;
  return sc;
}

struct Traffic {
  int count = 0;
  double message = 0;  // sum of the messages (each rank's buffer)
  double sent = 0;     // sum of the bytes a rank sends: (n - 1) / n of each all-to-all's message
};

Traffic traffic(const std::vector<strat::LayerStep>& steps, const strat::ParallelSpec& p,
                StepGroup group, cost::CollectiveKind kind) {
  Traffic t;
  for (const auto& s : steps) {
    if (!s.is_collective || s.group != group || s.collective.kind != kind) continue;
    const int n = strat::cp_group_shape(p, group).size;
    ++t.count;
    t.message += s.collective.message.value;
    t.sent += kind == cost::CollectiveKind::kAllToAll ? s.collective.message.value * (n - 1) / n
                                                      : s.collective.message.value;
  }
  return t;
}

double compute_flops(const std::vector<strat::LayerStep>& steps) {
  double f = 0;
  for (const auto& s : steps) {
    if (!s.is_collective) f += s.compute.flops.value;
  }
  return f;
}

int kernels(const std::vector<strat::LayerStep>& steps) {
  int n = 0;
  for (const auto& s : steps) {
    if (!s.is_collective) n += s.compute.kernels;
  }
  return n;
}

std::vector<std::string> problems(const std::string& parallel) {
  const std::string text = R"({"model": {"preset": "llama3-8b", "seq_len": 16384},
      "cluster": {"preset": "dgx-h100", "nodes": 2}, "training": {"global_batch": 16,
      "micro_batch": 1, "attention": "flash"}, "parallel": )" +
                           parallel + "}";
  try {
    strat::parse_scenario(text, "t.json");
  } catch (const cost::InputError& e) {
    std::vector<std::string> out;
    for (const auto& p : e.diagnostics().problems()) out.push_back(p.json_path + ": " + p.message);
    return out;
  }
  return {};
}

bool has(const std::vector<std::string>& lines, const std::string& path, const std::string& text) {
  for (const auto& l : lines) {
    if (l.rfind(path + ": ", 0) == 0 && l.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("Ulysses moves (cp-1)/cp of each rank's Q, K, V and O per layer, each way") {
  const auto sc = gqa_scenario(CpComm::kAllToAll);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  // Hand count, B = 1, S = 8192, cp = 4, t = 2, a = 32, kv = 8, d = 128, e = 2: each rank's
  // [S/cp, B, heads/t, d] tensors: Q and O 2048 x 16 x 128 x 2 = 8 MiB, K and V 2048 x 4 x 128
  // x 2 = 2 MiB; a rank keeps 1/4 of each: (3/4) x (8 + 2 + 2 + 8) MiB = 15 MiB each way.
  const double mib = 1024.0 * 1024.0;
  for (const auto* steps : {&p.forward, &p.backward}) {
    const Traffic t =
        traffic(*steps, sc.parallel, StepGroup::kContextParallel, cost::CollectiveKind::kAllToAll);
    CHECK(t.count == 4);  // q, k, v, out (forward); dout, dq, dk, dv (backward)
    CHECK(t.message == 20 * mib);
    CHECK(t.sent == 15 * mib);
    // The header's closed form: 2 B S (a + kv) d e (cp - 1) / (cp^2 t).
    CHECK(t.sent == 2.0 * 1 * 8192 * (32 + 8) * 128 * 2 * 3 / (16 * 2));
    // Nothing else crosses the cp group.
    for (auto kind : {cost::CollectiveKind::kSendRecv, cost::CollectiveKind::kAllGather,
                      cost::CollectiveKind::kReduceScatter}) {
      CHECK(traffic(*steps, sc.parallel, StepGroup::kContextParallel, kind).count == 0);
    }
  }
  // The plan NCCL runs sends exactly that: (n - 1) / n of the message per rank.
  const cost::GroupPlacement node{4, 4, 1};
  for (const auto& s : p.forward) {
    if (!s.is_collective || s.group != StepGroup::kContextParallel) continue;
    const auto plan = strat::plan_step(costs, s.collective, node);
    CHECK(cost::bytes_sent_per_rank(plan).value ==
          doctest::Approx(s.collective.message.value * 3 / 4).epsilon(1e-12));
  }
}

TEST_CASE("Ulysses: the same causal attention work as the ring, the same activations") {
  const auto ring = gqa_scenario(CpComm::kRing);
  const auto a2a = gqa_scenario(CpComm::kAllToAll);
  const cost::CostModel costs(ring.cluster);
  const auto r = strat::transformer_layer_program(ring, costs);
  const auto u = strat::transformer_layer_program(a2a, costs);
  // The ring: cp blocks of (S/cp)^2 with a/t heads; Ulysses: one S^2 block with a/(t cp) heads.
  CHECK(compute_flops(u.forward) == doctest::Approx(compute_flops(r.forward)).epsilon(1e-12));
  CHECK(compute_flops(u.backward) == doctest::Approx(compute_flops(r.backward)).epsilon(1e-12));
  // Activations: TE keeps Q, K, V and O after the all-to-all, the same elements as before it.
  CHECK(u.activation_stored_bytes == r.activation_stored_bytes);
  CHECK(u.activation_full_bytes == r.activation_full_bytes);
  // Kernels: TE's two copies around each all-to-all'd tensor (8 each way) and one attention
  // kernel where the ring has cp = 4.
  CHECK(kernels(u.forward) - kernels(r.forward) == 8 - 3);
  CHECK(kernels(u.backward) - kernels(r.backward) == 8 - 3);
}

TEST_CASE("a2a+p2p: all-to-all in groups of cp_a2a_size, a ring across them") {
  const auto sc = gqa_scenario(CpComm::kAllToAllP2p, 8, 2);
  const auto a2a = strat::cp_group_shape(sc.parallel, StepGroup::kContextAllToAll);
  const auto ring = strat::cp_group_shape(sc.parallel, StepGroup::kContextRing);
  CHECK(a2a.size == 2);
  CHECK(a2a.stride == 1);
  CHECK(ring.size == 4);
  CHECK(ring.stride == 2);
  CHECK(strat::cp_group_shape(sc.parallel, StepGroup::kContextParallel).size == 8);
  // Placement on two 8-GPU nodes with tp 2: replicas 0, 1 are GPUs 0, 2 (one node); the ring's
  // replicas 0, 2, 4, 6 are GPUs 0, 4, 8, 12 (two per node).
  strat::ParallelSpec folded = sc.parallel;
  folded.dp = sc.parallel.dp * sc.parallel.cp;
  const strat::RankLayout layout(folded, 8);
  const auto inner = layout.replica_strided_group(0, 0, a2a.size, a2a.stride);
  const auto outer = layout.replica_strided_group(0, 0, ring.size, ring.stride);
  CHECK(inner.size == 2);
  CHECK(inner.nodes_spanned == 1);
  CHECK(outer.size == 4);
  CHECK(outer.nodes_spanned == 2);
  CHECK(outer.gpus_per_node_in_group == 2);

  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  // Bytes: the a2a over 2 ranks moves 1/2 of each [S/8, B, heads/t, d] tensor (Q, O 4 MiB, K, V
  // 1 MiB): 5 MiB each way. The ring: 3 K/V blocks of 2 x 1024 x 4 x 128 x 2 = 2 MiB forward.
  const double mib = 1024.0 * 1024.0;
  const Traffic fa =
      traffic(p.forward, sc.parallel, StepGroup::kContextAllToAll, cost::CollectiveKind::kAllToAll);
  CHECK(fa.count == 4);
  CHECK(fa.sent == 5 * mib);
  const Traffic fr =
      traffic(p.forward, sc.parallel, StepGroup::kContextRing, cost::CollectiveKind::kSendRecv);
  CHECK(fr.count == 3);
  CHECK(fr.sent == 3 * 2 * mib);
  const Traffic ba = traffic(p.backward, sc.parallel, StepGroup::kContextAllToAll,
                             cost::CollectiveKind::kAllToAll);
  CHECK(ba.count == 4);
  CHECK(ba.sent == 5 * mib);
  // Backward ring: K/V and dK/dV per hop.
  CHECK(traffic(p.backward, sc.parallel, StepGroup::kContextRing, cost::CollectiveKind::kSendRecv)
            .sent == 2 * 3 * 2 * mib);
  CHECK(
      traffic(p.forward, sc.parallel, StepGroup::kContextParallel, cost::CollectiveKind::kAllToAll)
          .count == 0);
}

TEST_CASE("all-to-all context parallelism: the full simulation equals the symmetric one") {
  for (const auto& sc :
       {gqa_scenario(CpComm::kAllToAll, 4, 0, 2), gqa_scenario(CpComm::kAllToAllP2p, 4, 2, 2)}) {
    CAPTURE(static_cast<int>(sc.parallel.cp_comm));
    auto s = sc;
    s.model.layers = 2;
    const auto sym = test::simulate_report(s, false);
    const auto full = test::simulate_report(s, true);
    CHECK(sym.step_time_s == full.step_time_s);
    CHECK(full.comm_bytes[static_cast<std::size_t>(strat::CommKind::kContextParallel)] > 0);
  }
}

TEST_CASE("all-to-all context parallelism refuses heads it cannot split, with the path") {
  // llama3-8b: 32 heads, 8 K/V heads. tp 2, cp 8: 4 K/V heads per TP rank over 8 ranks.
  const auto bad = problems(R"({"dp": 1, "tp": 2, "cp": 8, "cp_variant": "a2a"})");
  CHECK(has(bad, "/parallel/cp_variant", "kv_heads (8) / tp (2) must be a multiple of cp"));
  CHECK(problems(R"({"dp": 2, "tp": 2, "cp": 4, "cp_variant": "a2a"})").empty());
  // a2a+p2p: cp_a2a_size required, a proper divisor of cp, and it alone must split the heads.
  CHECK(has(problems(R"({"dp": 1, "tp": 2, "cp": 8, "cp_variant": "a2a+p2p"})"),
            "/parallel/cp_a2a_size", "needs cp_a2a_size"));
  CHECK(has(problems(R"({"dp": 1, "tp": 2, "cp": 8, "cp_variant": "a2a+p2p", "cp_a2a_size": 3})"),
            "/parallel/cp_a2a_size", "must divide cp (8)"));
  CHECK(has(problems(R"({"dp": 1, "tp": 2, "cp": 8, "cp_variant": "a2a+p2p", "cp_a2a_size": 8})"),
            "/parallel/cp_a2a_size", "equal to cp is \"a2a\""));
  CHECK(problems(R"({"dp": 1, "tp": 2, "cp": 8, "cp_variant": "a2a+p2p", "cp_a2a_size": 4})")
            .empty());
  CHECK(has(problems(R"({"dp": 1, "tp": 1, "cp": 16, "cp_variant": "a2a+p2p", "cp_a2a_size": 16})"),
            "/parallel/cp_a2a_size", "must divide cp"));
  // cp_a2a_size belongs to a2a+p2p.
  CHECK(has(problems(R"({"dp": 2, "tp": 2, "cp": 4, "cp_variant": "ring", "cp_a2a_size": 2})"),
            "/parallel/cp_a2a_size", "applies to \"cp_variant\": \"a2a+p2p\" only"));
}
