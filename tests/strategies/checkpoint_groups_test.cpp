// Megatron's grouped full recompute (strategies/layers/checkpoint_groups.hpp): which layers are
// checkpointed and grouped, what the simulated stage keeps and brings back (hand counts), the
// rerun FLOPs, and the scenario's problems at their JSON paths.
#include "strategies/layers/checkpoint_groups.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "costmodel/activation_memory.hpp"
#include "costmodel/cost_model.hpp"
#include "parser_problems.hpp"
#include "scenario_builder.hpp"
#include "sim/engine.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/workload/workload_builder.hpp"

using namespace parasim;

namespace {

strat::TrainingSpec full(cost::RecomputeMethod method, int n) {
  strat::TrainingSpec t;
  t.recompute = cost::Recompute::kFull;
  t.recompute_method = method;
  t.recompute_num_layers = n;
  return t;
}

struct Run {
  strat::BuiltWorkload built;
  sim::SimResult result;
};

Run simulate(const strat::Scenario& sc) {
  const cost::CostModel costs(sc.cluster);
  Run r;
  r.built = strat::build_workload(sc, costs, {false});
  r.result = sim::Engine(r.built.workload).run();
  return r;
}

double activations_at_peak(const Run& r, std::size_t device) {
  const auto& cats = r.built.workload.memory_categories();
  for (std::size_t c = 0; c < cats.size(); ++c) {
    if (cats[c] == "activations")
      return static_cast<double>(r.result.peak_breakdown_bytes[device][c]);
  }
  return -1;
}

// Two stages of four layers, 1F1B over 8 micro-batches: stage 0 holds two micro-batches.
strat::Scenario two_stages(cost::RecomputeMethod method, int n) {
  auto sc = test::small_scenario(1, 1, 2, 8, 1, 2);
  sc.training.recompute = cost::Recompute::kFull;
  sc.training.recompute_method = method;
  sc.training.recompute_num_layers = n;
  return sc;
}

}  // namespace

TEST_CASE(
    "uniform groups of N from a stage's first layer, the last one shorter; block's first N alone") {
  const auto u = strat::stage_checkpoints(full(cost::RecomputeMethod::kUniform, 3), 7);
  // Groups [0, 2], [3, 5], [6] (recompute.py: chunk_end = min(layer_idx + N, layers)).
  const std::vector<int> sizes{0, 0, 3, 0, 0, 3, 1};
  const std::vector<bool> inputs{true, false, false, true, false, false, true};
  for (std::size_t l = 0; l < 7; ++l) {
    CAPTURE(l);
    CHECK(u[l].checkpointed);
    CHECK(u[l].group_size == sizes[l]);
    CHECK(u[l].keeps_input == inputs[l]);
  }
  const auto b = strat::stage_checkpoints(full(cost::RecomputeMethod::kBlock, 2), 5);
  for (std::size_t l = 0; l < 5; ++l) {
    CAPTURE(l);
    CHECK(b[l].checkpointed == (l < 2));
    CHECK(b[l].keeps_input == (l < 2));
    CHECK(b[l].group_size == (l < 2 ? 1 : 0));
  }
  CHECK(strat::rerun_layers(b) == 2);
  // Bytes: uniform 3 over 7 layers keeps three inputs; its largest group reruns 3 full - input.
  const strat::CheckpointBytes bytes{10, 100, 80};
  CHECK(strat::stage_kept_bytes(u, bytes) == 30);
  CHECK(strat::stage_recompute_peak(u, bytes) == 290);
  CHECK(strat::stage_kept_bytes(b, bytes) == 2 * 10 + 3 * 80);
  CHECK(strat::stage_recompute_peak(b, bytes) == 90);
  // Uniform 1 is plain full recompute, which keeps its own path; not full: nothing checkpointed.
  CHECK_FALSE(strat::grouped_recompute(full(cost::RecomputeMethod::kUniform, 1)));
  CHECK(strat::grouped_recompute(full(cost::RecomputeMethod::kBlock, 1)));
  strat::TrainingSpec none;
  CHECK(strat::rerun_layers(strat::stage_checkpoints(none, 4)) == 0);
}

TEST_CASE(
    "grouped full recompute: stage 0's activation peak is the kept inputs plus the live group") {
  const auto base = two_stages(cost::RecomputeMethod::kUniform, 1);
  const auto shape = strat::activation_shape(base);
  const double in = cost::activation_bytes_per_layer(shape, cost::Recompute::kFull).value;
  const double all = cost::activation_bytes_per_layer(shape, cost::Recompute::kNone).value;
  // 1F1B: stage 0 runs its first backward with 2 micro-batches in flight; the backward's first
  // group (the stage's last) reruns with everything kept. Whole bytes per op: a byte of rounding
  // per allocation.
  struct Case {
    cost::RecomputeMethod method;
    int n;
    double expected;
  };
  for (const Case c : {Case{cost::RecomputeMethod::kUniform, 1, 2 * 4 * in + (all - in)},
                       Case{cost::RecomputeMethod::kUniform, 2, 2 * 2 * in + (2 * all - in)},
                       Case{cost::RecomputeMethod::kUniform, 4, 2 * 1 * in + (4 * all - in)},
                       // block 2: layers 0, 1 keep their inputs, 2, 3 everything (no rerun before
                       // theirs); the peak is the two micro-batches' kept sets.
                       Case{cost::RecomputeMethod::kBlock, 2, 2 * (2 * in + 2 * all)},
                       Case{cost::RecomputeMethod::kBlock, 4, 2 * 4 * in + (all - in)}}) {
    CAPTURE(c.n);
    CAPTURE(static_cast<int>(c.method));
    const auto r = simulate(two_stages(c.method, c.n));
    CHECK(std::abs(activations_at_peak(r, 0) - c.expected) <= 16);
  }
}

TEST_CASE("grouped full recompute reruns each checkpointed layer's forward once") {
  const auto one = simulate(two_stages(cost::RecomputeMethod::kUniform, 1));
  const auto four = simulate(two_stages(cost::RecomputeMethod::kUniform, 4));
  const auto block = simulate(two_stages(cost::RecomputeMethod::kBlock, 1));
  const auto none_sc = [] {
    auto s = two_stages(cost::RecomputeMethod::kUniform, 1);
    s.training.recompute = cost::Recompute::kNone;
    return s;
  }();
  const auto none = simulate(none_sc);
  const auto sc = two_stages(cost::RecomputeMethod::kUniform, 1);
  double forward = 0;  // one layer's forward FLOPs per micro-batch
  for (const auto& s : strat::transformer_layer_program(sc, cost::CostModel(sc.cluster)).forward) {
    if (!s.is_collective) forward += s.compute.flops.value;
  }
  const double m = sc.micro_batches();
  // Uniform reruns every layer (8) once per micro-batch whatever N; block 1 reruns one layer per
  // stage (2), the other six keep their activations.
  CHECK(four.built.executed_flops_per_step.value ==
        doctest::Approx(one.built.executed_flops_per_step.value).epsilon(1e-12));
  CHECK(one.built.executed_flops_per_step.value - none.built.executed_flops_per_step.value ==
        doctest::Approx(8 * m * forward).epsilon(1e-9));
  CHECK(block.built.executed_flops_per_step.value - none.built.executed_flops_per_step.value ==
        doctest::Approx(2 * m * forward).epsilon(1e-9));
  CHECK(block.built.model_flops_per_step.value == one.built.model_flops_per_step.value);
  // The same GPU work in another order: uniform 4's step no faster than keeping everything.
  CHECK(four.result.makespan >= none.result.makespan);
}

TEST_CASE("recompute_method and recompute_num_layers: problems at their paths") {
  auto text = [](const std::string& training, const std::string& model = "\"llama2-7b\"") {
    return R"({"model": )" + model + R"(, "cluster": "dgx-h100", "training": {"global_batch": 8,
      "micro_batch": 1, )" +
           training + R"(}, "parallel": {"dp": 4, "pp": 2}})";
  };
  auto p = test::problems_of(text(R"("recompute": "selective", "recompute_method": "block",
      "recompute_num_layers": 2)"));
  CHECK(test::has_problem(p, "/training/recompute_method", "applies to \"recompute\": \"full\""));
  CHECK(
      test::has_problem(p, "/training/recompute_num_layers", "applies to \"recompute\": \"full\""));
  p = test::problems_of(text(R"("recompute": "full", "recompute_method": "every",
      "recompute_num_layers": 0)"));
  CHECK(test::has_problem(p, "/training/recompute_method", "uniform"));
  CHECK(test::has_problem(p, "/training/recompute_num_layers", ""));
  // llama2-7b's 32 layers on two stages: block takes at most 16.
  p = test::problems_of(text(R"("recompute": "full", "recompute_method": "block",
      "recompute_num_layers": 17)"));
  CHECK(test::has_problem(p, "/training/recompute_num_layers", "at most 16"));
  p = test::problems_of(
      text(R"("recompute": "full", "recompute_num_layers": 2)", R"({"preset": "mixtral-8x7b"})"));
  CHECK(test::has_problem(p, "/model/moe", "for dense layers"));
  // Uniform over more layers than a stage holds is one group, as Megatron runs it.
  const auto ok =
      strat::parse_scenario(text(R"("recompute": "full", "recompute_num_layers": 40)"), "ok.json");
  CHECK(ok.training.recompute_num_layers == 40);
}

TEST_CASE("a uniform group pays the checkpoint's nested backward once, on its last layer") {
  // The ideal framework (no host work) but a 20 ms checkpointed_layer: the host bounds the
  // backward, one nested backward per group (recompute.py: one CheckpointFunction per group).
  auto one = two_stages(cost::RecomputeMethod::kUniform, 1);
  auto four = two_stages(cost::RecomputeMethod::kUniform, 4);
  const double before = simulate(one).result.makespan.to_seconds();
  CHECK(simulate(four).result.makespan.to_seconds() == doctest::Approx(before).epsilon(1e-12));
  one.training.framework.host.checkpointed_layer = sim::Time::us(20000);
  four.training.framework.host.checkpointed_layer = sim::Time::us(20000);
  const double slow_one = simulate(one).result.makespan.to_seconds();
  const double slow_four = simulate(four).result.makespan.to_seconds();
  // Uniform 1: 4 nested backwards per micro-batch and stage, uniform 4: 1; 8 micro-batches, the
  // two stages' backwards in a 1F1B chain: at least 8 x 3 x 20 ms apart on the slower stage.
  CHECK(slow_one - slow_four >= 8 * 3 * 0.020 * 0.99);
  CHECK(slow_four > before);
}

TEST_CASE("every-nth: a rank's layers N, 2N, ... (1-based) checkpointed alone, the rest plain") {
  // torchtitan 0.2.2's _apply_layer_sac: count % N == 0 on a 1-based per-process counter.
  const auto e = strat::stage_checkpoints(full(cost::RecomputeMethod::kEveryNth, 3), 8);
  for (std::size_t l = 0; l < 8; ++l) {
    CAPTURE(l);
    const bool on = (l + 1) % 3 == 0;  // layers 3 and 6
    CHECK(e[l].checkpointed == on);
    CHECK(e[l].keeps_input == on);
    CHECK(e[l].group_size == (on ? 1 : 0));
  }
  CHECK(strat::rerun_layers(e) == 2);
  const strat::CheckpointBytes bytes{10, 100, 80};
  CHECK(strat::stage_kept_bytes(e, bytes) == 2 * 10 + 6 * 80);
  CHECK(strat::stage_recompute_peak(e, bytes) == 90);
  // N above the stage's layers checkpoints none; N 1 every layer, each alone.
  CHECK(strat::rerun_layers(strat::stage_checkpoints(full(cost::RecomputeMethod::kEveryNth, 9), 8)) ==
        0);
  CHECK(strat::rerun_layers(strat::stage_checkpoints(full(cost::RecomputeMethod::kEveryNth, 1), 8)) ==
        8);
  CHECK(strat::has_plain_layers(full(cost::RecomputeMethod::kEveryNth, 2)));
  CHECK_FALSE(strat::has_plain_layers(full(cost::RecomputeMethod::kUniform, 2)));
}

TEST_CASE("every-nth: the simulated peak and the rerun FLOPs by hand") {
  const auto base = two_stages(cost::RecomputeMethod::kEveryNth, 2);
  const auto shape = strat::activation_shape(base);
  const double in = cost::activation_bytes_per_layer(shape, cost::Recompute::kFull).value;
  const double all = cost::activation_bytes_per_layer(shape, cost::Recompute::kNone).value;
  // Stage 0's layers 1 and 3 (0-based) checkpointed, 0 and 2 keep everything; two micro-batches
  // in flight when the first backward reruns layer 3 (full - input on top).
  const auto r = simulate(base);
  CHECK(std::abs(activations_at_peak(r, 0) - (2 * (2 * in + 2 * all) + (all - in))) <= 16);
  auto none_sc = base;
  none_sc.training.recompute = cost::Recompute::kNone;
  none_sc.training.recompute_method = cost::RecomputeMethod::kUniform;
  none_sc.training.recompute_num_layers = 1;
  const auto none = simulate(none_sc);
  double forward = 0;
  for (const auto& s :
       strat::transformer_layer_program(base, cost::CostModel(base.cluster)).forward) {
    if (!s.is_collective) forward += s.compute.flops.value;
  }
  // Two layers of each of the two stages rerun once per micro-batch.
  CHECK(r.built.executed_flops_per_step.value - none.built.executed_flops_per_step.value ==
        doctest::Approx(4 * base.micro_batches() * forward).epsilon(1e-9));
  // Sharded by FSDP2: its step lies between none's and full's.
  {
    auto sharded = base;
    sharded.parallel.dp = 2;
    sharded.training.global_batch = 16;
    sharded.parallel.zero_stage = 3;
    sharded.parallel.fsdp2.enabled = true;
    const double every = simulate(sharded).result.makespan.to_seconds();
    auto plain = sharded;
    plain.training.recompute = cost::Recompute::kNone;
    plain.training.recompute_method = cost::RecomputeMethod::kUniform;
    plain.training.recompute_num_layers = 1;
    auto each = sharded;
    each.training.recompute_method = cost::RecomputeMethod::kUniform;
    each.training.recompute_num_layers = 1;
    CHECK(simulate(plain).result.makespan.to_seconds() < every);
    CHECK(every < simulate(each).result.makespan.to_seconds());
  }
}

TEST_CASE("every-nth: problems at their paths") {
  auto text = [](const std::string& training, const std::string& parallel) {
    return R"({"model": "llama2-7b", "cluster": "dgx-h100", "training": {"global_batch": 16,
      "micro_batch": 1, "recompute": "full", "recompute_method": "every-nth", )" +
           training + R"(}, "parallel": {)" + parallel + R"(}})";
  };
  CHECK_NOTHROW(strat::parse_scenario(
      text(R"("recompute_num_layers": 2)", R"("dp": 8, "sharding": "fsdp2")"), "ok.json"));
  CHECK(test::has_problem(test::problems_of(text(R"("recompute_num_layers": 2)",
                                                 R"("dp": 4, "pp": 2, "zero_stage": 3)")),
                          "/parallel/zero_stage", "not DeepSpeed's ZeRO-3"));
  // every-nth 1 is plain full: interleaving runs it.
  CHECK_NOTHROW(strat::parse_scenario(
      text(R"("recompute_num_layers": 1)",
           R"("dp": 2, "pp": 4, "schedule": "interleaved-1f1b", "chunks": 2)"),
      "one.json"));
  auto p = test::problems_of(text(R"("recompute_num_layers": 2)",
                                  R"("dp": 2, "pp": 4, "schedule": "interleaved-1f1b",
                                     "chunks": 2)"));
  CHECK(test::has_problem(p, "/parallel/chunks", "one model chunk per rank"));
  p = test::problems_of(text(R"("recompute_num_layers": 2, "precision": "fp8")", R"("dp": 8)"));
  CHECK(test::has_problem(p, "/training/fp8", "without FP8"));
  // Megatron's block keeps refusing sharded parameters.
  p = test::problems_of(R"({"model": "llama2-7b", "cluster": "dgx-h100",
      "training": {"global_batch": 16, "micro_batch": 1, "recompute": "full",
                   "recompute_method": "block", "recompute_num_layers": 2},
      "parallel": {"dp": 8, "sharding": "fsdp2"}})");
  CHECK(test::has_problem(p, "/parallel/zero_stage", "without ZeRO-3 or FSDP2"));
}
