// FSDP2 (strategies/data_parallel/fsdp2_units.hpp, fsdp2_emission.cpp): torchtitan's units and
// policies, the copy kernels' bytes, the model state, the collectives a simulated step issues
// per unit and pass, HSDP's groups, pipelining's once-a-step gathers and reductions, and the
// parser's rules.
#include <doctest/doctest.h>

#include <string>

#include "parser_problems.hpp"
#include "scenario_builder.hpp"
#include "strategies/data_parallel/fsdp2_units.hpp"
#include "strategies/input/workload_estimate.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;
using strat::Fsdp2Spec;
using strat::Fsdp2UnitKind;

namespace {

// Llama 2 7B cut to 8 layers, sequence 1024, on dp GPUs (x pp), FSDP2.
strat::Scenario fsdp2_scenario(int dp, int pp, int global_batch) {
  auto sc = test::small_scenario(dp, 1, pp, global_batch, 1);
  sc.parallel.zero_stage = 3;
  sc.parallel.fsdp2.enabled = true;
  sc.training.attention = strat::AttentionKind::kFlash;
  sc.training.fp32_gradients = true;  // torchtitan's mixed_precision_reduce float32
  return sc;
}

const strat::CollectiveSummary* collective(const strat::StepReport& r, const std::string& op) {
  for (const auto& c : r.collectives) {
    if (c.kind == "dp" && c.op == op) return &c;
  }
  return nullptr;
}

double category(const strat::DeviceMemory& m, const std::string& name) {
  for (const auto& [n, bytes] : m.breakdown_bytes) {
    if (n == name) return bytes;
  }
  return -1;
}

}  // namespace

TEST_CASE("reshard after forward: torchtitan's default, true, false and N; the head's rule") {
  auto sc = fsdp2_scenario(8, 1, 16);
  const int shard = sc.parallel.fsdp2_shard();
  REQUIRE(shard == 8);
  // Default without pipelining: blocks and embedding reshard, the norm-and-head unit stays whole.
  CHECK(strat::fsdp2_post_forward_ranks(sc, Fsdp2UnitKind::kBlock) == shard);
  CHECK(strat::fsdp2_post_forward_ranks(sc, Fsdp2UnitKind::kEmbedding) == shard);
  CHECK(strat::fsdp2_post_forward_ranks(sc, Fsdp2UnitKind::kHead) == 1);
  CHECK(strat::fsdp2_reduces_every_micro_batch(sc));
  sc.parallel.fsdp2.reshard_after_forward = Fsdp2Spec::kShardGroup;  // true: everything reshards
  CHECK(strat::fsdp2_post_forward_ranks(sc, Fsdp2UnitKind::kHead) == shard);
  sc.parallel.fsdp2.reshard_after_forward = 1;  // false
  CHECK(strat::fsdp2_post_forward_ranks(sc, Fsdp2UnitKind::kBlock) == 1);
  sc.parallel.fsdp2.reshard_after_forward = 4;
  CHECK(strat::fsdp2_post_forward_ranks(sc, Fsdp2UnitKind::kBlock) == 4);
  CHECK(strat::fsdp2_post_forward_ranks(sc, Fsdp2UnitKind::kHead) == 1);
  sc.parallel.fsdp2.reshard_after_forward = shard;  // N = the shard group is True
  CHECK(strat::fsdp2_post_forward_ranks(sc, Fsdp2UnitKind::kHead) == shard);
  // Tied embeddings: one unit with the head, the head's rule.
  sc.parallel.fsdp2.reshard_after_forward.reset();
  sc.model.tied_embeddings = true;
  CHECK(strat::fsdp2_post_forward_ranks(sc, Fsdp2UnitKind::kEmbedding) == 1);
  // Default with pipelining: kept whole; gradients reduced once a step.
  auto piped = fsdp2_scenario(4, 2, 16);
  CHECK(strat::fsdp2_post_forward_ranks(piped, Fsdp2UnitKind::kBlock) == 1);
  CHECK_FALSE(strat::fsdp2_reduces_every_micro_batch(piped));
  // HSDP and cp: the shard group is dp / replicate x cp.
  piped.parallel.fsdp2.replicate = 2;
  piped.parallel.cp = 2;
  CHECK(piped.parallel.fsdp2_shard() == 4);
}

TEST_CASE("copy kernels, wire bytes and model state, exactly") {
  auto sc = fsdp2_scenario(4, 1, 8);  // p = 2 (bf16), r = 4 (fp32), S = 4
  const double e = 1000;
  const strat::Fsdp2CopyBytes c = strat::fsdp2_copy_bytes(sc, e);
  CHECK(c.gather_copy_in == doctest::Approx(250 * (4 + 2) + 250 * 2 * 2));
  CHECK(c.gather_copy_out == doctest::Approx(1000 * 2 * 2));
  CHECK(c.reduce_copy_in == doctest::Approx(1000 * (2 + 4)));
  CHECK(c.grad_accumulate == doctest::Approx(250 * 12));
  CHECK(c.unsharded_accumulate == doctest::Approx(1000 * (2 + 2 * 4)));
  CHECK(strat::fsdp2_gather_bytes(sc, e, Fsdp2UnitKind::kEmbedding) == doctest::Approx(2000));
  CHECK(strat::fsdp2_reduce_bytes(sc, e) == doctest::Approx(4000));
  sc.parallel.fsdp2.replicate = 2;  // S = 2
  CHECK(strat::fsdp2_replica_reduce_bytes(sc, e) == doctest::Approx(500 * 4));
  sc.training.fp32_gradients = false;  // reduce in bf16
  CHECK(strat::fsdp2_reduce_bytes(sc, e) == doctest::Approx(2000));
  const auto state = strat::fsdp2_model_state_bytes(8e9, 8);
  CHECK(state.weights.value == doctest::Approx(4e9));
  CHECK(state.gradients.value == doctest::Approx(4e9));
  CHECK(state.optimizer.value == doctest::Approx(8e9));
  CHECK_THROWS(strat::fsdp2_model_state_bytes(1, 0));
}

TEST_CASE("a step without pipelining: gathers and reductions per unit and micro-batch") {
  auto sc = fsdp2_scenario(8, 1, 16);  // 2 micro-batches of 1 per replica
  const int layers = sc.model.layers, m = 2;
  const auto r = test::simulate_report(sc);
  const auto* ag = collective(r, "all-gather");
  const auto* rs = collective(r, "reduce-scatter");
  REQUIRE(ag != nullptr);
  REQUIRE(rs != nullptr);
  // Forward: every block, the embedding and the head; backward: every block and the embedding
  // again (the head stayed whole).
  CHECK(ag->count_per_gpu == m * ((layers + 2) + (layers + 1)));
  CHECK(rs->count_per_gpu == m * (layers + 2));
  CHECK(collective(r, "all-reduce") == nullptr);
  // The reduce-scatters move each unit's gradients in fp32.
  const double block = strat::layer_params_per_tp_rank(sc.model, 1);
  const double embed = strat::input_embedding_params_per_tp_rank(sc.model, 1);
  const double head = strat::head_params_per_tp_rank(sc.model, 1, 0);
  CHECK(rs->mean_message_bytes ==
        doctest::Approx(4 * (layers * block + embed + head) / (layers + 2)).epsilon(1e-9));
  // The model state: fp32 shards of everything, 16 B per parameter over 8 ranks.
  const double params = layers * block + embed + head;
  REQUIRE(r.memory.size() == 1);
  CHECK(category(r.memory[0], "weights") == doctest::Approx(4 * params / 8).epsilon(1e-6));
  CHECK(category(r.memory[0], "gradients") == doctest::Approx(4 * params / 8).epsilon(1e-6));
  CHECK(category(r.memory[0], "optimizer state") == doctest::Approx(8 * params / 8).epsilon(1e-6));
  // Nothing left gathered between steps: the unsharded parameters are a transient.
  CHECK(category(r.memory[0], "fsdp2 unsharded parameters") >= 0);

  // Tied embeddings: the embedding, norm and head are one unit (one reduction fewer).
  auto tied = sc;
  tied.model.tied_embeddings = true;
  const auto rt = test::simulate_report(tied);
  CHECK(collective(rt, "reduce-scatter")->count_per_gpu == m * (layers + 1));
  // Kept whole after the forward: no backward gathers, more memory, never a slower step.
  auto kept = sc;
  kept.parallel.fsdp2.reshard_after_forward = 1;
  const auto rk = test::simulate_report(kept);
  CHECK(collective(rk, "all-gather")->count_per_gpu == m * (layers + 2));
  CHECK(rk.step_time_s <= r.step_time_s);
  CHECK(rk.memory[0].peak_bytes > r.memory[0].peak_bytes);
}

TEST_CASE("HSDP: reduce-scatter over the shard group, all-reduce of the shard over the replicas") {
  auto sc = fsdp2_scenario(8, 1, 16);
  sc.parallel.fsdp2.replicate = 2;
  const auto r = test::simulate_report(sc);
  const auto* rs = collective(r, "reduce-scatter");
  const auto* ar = collective(r, "all-reduce");
  const auto* ag = collective(r, "all-gather");
  REQUIRE(rs != nullptr);
  REQUIRE(ar != nullptr);
  CHECK(rs->group_size == 4);
  CHECK(ag->group_size == 4);
  CHECK(ar->group_size == 2);
  CHECK(ar->count_per_gpu == rs->count_per_gpu);
  CHECK(ar->mean_message_bytes == doctest::Approx(rs->mean_message_bytes / 4).epsilon(1e-9));
  // Every GPU simulated: the same step.
  const auto full = test::simulate_report(sc, true);
  CHECK(full.step_time_s == doctest::Approx(r.step_time_s).epsilon(1e-9));
}

TEST_CASE("pipelining: one gather and one reduction per unit and step") {
  auto sc = fsdp2_scenario(4, 2, 32);  // 8 micro-batches per pipeline, 4 layers per stage
  const auto r = test::simulate_report(sc);
  const auto* ag = collective(r, "all-gather");
  const auto* rs = collective(r, "reduce-scatter");
  REQUIRE(ag != nullptr);
  REQUIRE(rs != nullptr);
  // Each stage holds 4 blocks and the embedding or the head: 5 units.
  CHECK(ag->count_per_gpu == 5);
  CHECK(rs->count_per_gpu == 5);
  // Resharded after every forward: gathered again before every backward.
  auto always = sc;
  always.parallel.fsdp2.reshard_after_forward = Fsdp2Spec::kShardGroup;
  const auto ra = test::simulate_report(always);
  CHECK(collective(ra, "all-gather")->count_per_gpu > 8 * 4);
  CHECK(collective(ra, "reduce-scatter")->count_per_gpu == 5);
}

TEST_CASE("the parser: sharding, zero_stage and parallel.fsdp, every problem with its path") {
  const std::string head = R"({"model": "llama2-7b", "cluster": "dgx-h100",
      "training": {"global_batch": 16, "attention": "flash"}, "parallel": )";
  // fsdp2 and zero_stage 3 agree.
  const auto ok = strat::parse_scenario(head + R"({"dp": 8, "sharding": "fsdp2", "zero_stage": 3,
                 "fsdp": {"reshard_after_forward": 2, "replicate": 2}}})",
                                        "ok.json");
  CHECK(ok.parallel.fsdp2.enabled);
  CHECK(ok.parallel.zero_stage == 3);
  CHECK(ok.parallel.fsdp2.reshard_after_forward == 2);
  CHECK(ok.parallel.fsdp2.replicate == 2);
  const auto zero = strat::parse_scenario(head + R"({"dp": 8, "sharding": "zero-2"}})", "z.json");
  CHECK_FALSE(zero.parallel.fsdp2.enabled);
  CHECK(zero.parallel.zero_stage == 2);
  const auto p =
      test::problems_of(head + R"({"dp": 8, "pp": 1, "sharding": "fsdp2", "zero_stage": 2,
                 "fsdp": {"reshard_after_forward": "sometimes", "replicate": 3}}})");
  CHECK(test::has_problem(p, "/parallel/sharding", "contradicts zero_stage 2"));
  CHECK(test::has_problem(p, "/parallel/fsdp/reshard_after_forward", "expected \"default\""));
  const auto q = test::problems_of(
      head + R"({"dp": 8, "sharding": "fsdp2", "schedule": "zb-h1", "fsdp": {"replicate": 3}}})");
  CHECK(test::has_problem(q, "/parallel/sharding", "gpipe, 1f1b and interleaved-1f1b"));
  CHECK(test::has_problem(q, "/parallel/fsdp/replicate", "must divide dp"));
  const auto n = test::problems_of(
      head + R"({"dp": 8, "sharding": "fsdp2", "fsdp": {"reshard_after_forward": 3}}})");
  CHECK(test::has_problem(n, "/parallel/fsdp/reshard_after_forward", "must divide the shard"));
  const auto off =
      test::problems_of(head + R"({"dp": 8, "zero_stage": 3, "fsdp": {"replicate": 2}}})");
  CHECK(test::has_problem(off, "/parallel/fsdp", "applies to \"sharding\": \"fsdp2\" only"));
}

TEST_CASE("the op estimate bounds FSDP2's ops from above, within 10 %") {
  std::vector<strat::Scenario> cases = {fsdp2_scenario(8, 1, 16), fsdp2_scenario(4, 2, 32)};
  auto hsdp = fsdp2_scenario(8, 1, 16);
  hsdp.parallel.fsdp2.replicate = 2;
  cases.push_back(hsdp);
  auto always = fsdp2_scenario(4, 2, 32);
  always.parallel.fsdp2.reshard_after_forward = Fsdp2Spec::kShardGroup;
  cases.push_back(always);
  auto kept = fsdp2_scenario(8, 1, 16);
  kept.parallel.fsdp2.reshard_after_forward = 1;
  cases.push_back(kept);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    for (bool full : {false, true}) {
      const cost::CostModel costs(cases[i].cluster);
      const auto built = strat::build_workload(cases[i], costs, {full});
      const auto ops = static_cast<double>(built.workload.op_count());
      const double estimate = strat::estimate_workload(cases[i], full).ops;
      CHECK(estimate >= ops);
      CHECK(estimate <= 1.10 * ops);
    }
  }
}
