// Uneven layers per pipeline stage: parallel.stage_layers and Megatron-LM's first / last stage
// counts (--decoder-first/last-pipeline-num-layers, the rest split evenly:
// megatron/core/transformer/transformer_block.py, get_transformer_layer_offset), the parser's
// checks, and the simulation following the real per-stage counts (time, memory, FLOPs).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "equal_stages.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/workload/workload_builder.hpp"

using namespace parasim;
using strat::PipelineSchedule;

namespace {

// gpt2-medium (24 layers) on 8 GPUs, pp 8 unless `parallel` says otherwise.
std::string text_with(const std::string& parallel, int layers = 24) {
  return R"({"model": {"preset": "gpt2-medium", "layers": )" + std::to_string(layers) +
         R"(}, "cluster": {"preset": "dgx-a100-80gb", "nodes": 1},
             "training": {"global_batch": 16}, "parallel": )" +
         parallel + "}";
}

std::vector<cost::Problem> problems_of(const std::string& text) {
  try {
    strat::parse_scenario(text, "test.json");
  } catch (const cost::InputError& e) {
    return e.diagnostics().problems();
  }
  FAIL("expected cost::InputError");
  return {};
}

bool has_problem(const std::vector<cost::Problem>& problems, const std::string& path,
                 const std::string& part) {
  return std::any_of(problems.begin(), problems.end(), [&](const cost::Problem& p) {
    return p.json_path == path && p.message.find(part) != std::string::npos;
  });
}

}  // namespace

TEST_CASE("stage_layers and Megatron's first/last stage counts give the per-stage layers") {
  const auto listed = strat::parse_scenario(
      text_with(R"({"pp": 8, "stage_layers": [2, 3, 3, 3, 3, 3, 3, 2]})", 22), "t.json");
  CHECK(listed.parallel.stage_layers == std::vector<int>{2, 3, 3, 3, 3, 3, 3, 2});
  CHECK(listed.stage_layer_count(0) == 2);
  CHECK(listed.first_layer_of_virtual_stage(2) == 5);

  // First and last one fewer (the Zero Bubble runs' layout): the middle six share 18.
  const auto edges = strat::parse_scenario(
      text_with(R"({"pp": 8, "first_stage_layers": 2, "last_stage_layers": 2})", 22), "t.json");
  CHECK(edges.parallel.stage_layers == listed.parallel.stage_layers);

  // Only the first given: the other seven stages share the rest.
  const auto first = strat::parse_scenario(
      text_with(R"({"pp": 8, "first_stage_layers": 1})", 22), "t.json");
  CHECK(first.parallel.stage_layers == std::vector<int>{1, 3, 3, 3, 3, 3, 3, 3});
  const auto last = strat::parse_scenario(
      text_with(R"({"pp": 2, "dp": 4, "last_stage_layers": 5})", 22), "t.json");
  CHECK(last.parallel.stage_layers == std::vector<int>{17, 5});

  // With interleaving, one count per virtual stage (vs = chunk x pp + stage).
  const auto chunks = strat::parse_scenario(
      text_with(R"({"pp": 4, "dp": 2, "schedule": "interleaved-1f1b", "chunks": 2,
                    "stage_layers": [2, 3, 3, 3, 3, 3, 3, 2]})",
                22),
      "t.json");
  CHECK(chunks.stage_layer_count(0) == 5);  // virtual stages 0 and 4
  CHECK(chunks.stage_layer_count(3) == 5);  // 3 and 7
  CHECK(chunks.first_layer_of_virtual_stage(4) == 11);

  // Without any: even, as before.
  const auto even = strat::parse_scenario(text_with(R"({"pp": 8})"), "t.json");
  CHECK(even.parallel.stage_layers.empty());
  CHECK(even.stage_layer_count(5) == 3);
  CHECK(even.first_layer_of_virtual_stage(5) == 15);
}

TEST_CASE("uneven stages: every problem at once, each at its path") {
  const auto elements =
      problems_of(text_with(R"({"pp": 8, "stage_layers": [2, -1, 3, "3", 3, 3, 3, 2.5]})", 22));
  CHECK(elements.size() == 3);
  CHECK(has_problem(elements, "/parallel/stage_layers/1", "expected a layer count"));
  CHECK(has_problem(elements, "/parallel/stage_layers/3", "got \"3\""));
  CHECK(has_problem(elements, "/parallel/stage_layers/7", "got 2.5"));

  const auto length = problems_of(text_with(R"({"pp": 8, "stage_layers": [11, 11]})", 22));
  CHECK(length.size() == 1);
  CHECK(has_problem(length, "/parallel/stage_layers", "expected 8 layer counts"));

  const auto sum = problems_of(text_with(R"({"pp": 8, "stage_layers": [3, 3, 3, 3, 3, 3, 3, 3]})", 22));
  CHECK(sum.size() == 1);
  CHECK(has_problem(sum, "/parallel/stage_layers", "add up to 24 layers, but the model has 22"));

  const auto chunked = problems_of(text_with(
      R"({"pp": 4, "dp": 2, "schedule": "interleaved-1f1b", "chunks": 2, "stage_layers": [6, 6, 5, 5]})",
      22));
  CHECK(chunked.size() == 1);
  CHECK(has_problem(chunked, "/parallel/stage_layers", "pp x chunks = 4 x 2"));

  CHECK(has_problem(problems_of(text_with(R"({"pp": 8, "first_stage_layers": 3})", 22)),
                    "/parallel/first_stage_layers", "must share them evenly"));
  CHECK(has_problem(problems_of(text_with(
                        R"({"pp": 8, "first_stage_layers": 2, "stage_layers": [2, 3, 3, 3, 3, 3, 3, 2]})",
                        22)),
                    "/parallel/first_stage_layers", "not both"));
  CHECK(has_problem(problems_of(text_with(R"({"pp": 1, "dp": 8, "last_stage_layers": 2})", 22)),
                    "/parallel/last_stage_layers", "need pp >= 2"));
  CHECK(has_problem(problems_of(text_with(
                        R"({"pp": 4, "dp": 2, "schedule": "interleaved-1f1b", "chunks": 2, "first_stage_layers": 2})",
                        22)),
                    "/parallel/first_stage_layers", "give parallel.stage_layers"));
  CHECK(has_problem(problems_of(text_with(R"({"pp": 2, "dp": 4, "first_stage_layers": 30})", 22)),
                    "/parallel/first_stage_layers", "leave -8 for the other 1 stage"));
  // The even split still refuses what does not divide, and says how to ask for uneven stages.
  CHECK(has_problem(problems_of(text_with(R"({"pp": 8})", 22)), "/parallel/pp",
                    "give parallel.stage_layers"));
}

TEST_CASE("1F1B with uneven stages: the slowest stage sets the steady state (closed form)") {
  // Equal-time layers (t_F = 6 us, t_B = 12 us each, free communication and head): stage s
  // takes F_s = 6 L_s, B_s = 12 L_s. When one stage k is the slowest and never waits once it has
  // started (the stages after it are faster, so their backwards are back in time), 1F1B's step is
  // the forwards before it, m of its F + B pairs, and the backwards before it:
  //   sum_{s<k} F_s + m (F_k + B_k) + sum_{s<k} B_s,
  // and stage k's bubble is the rest of that time.
  struct Case {
    std::vector<int> layers;
    int slowest;
  };
  for (const Case& c : {Case{{1, 3, 1, 1}, 1}, Case{{1, 1, 1, 2}, 3}, Case{{2, 4, 1, 1}, 1}}) {
    for (int m : {4, 8, 16}) {
      const int p = static_cast<int>(c.layers.size());
      CAPTURE(p);
      CAPTURE(m);
      CAPTURE(c.slowest);
      auto sc = test::equal_stage_scenario(PipelineSchedule::kOneFOneB, p, m);
      sc.parallel.stage_layers = c.layers;
      sc.model.layers = 0;
      for (int n : c.layers) sc.model.layers += n;
      const auto r = test::simulate_with(sc).report;
      double before = 0;
      for (int s = 0; s < c.slowest; ++s) before += 18e-6 * c.layers[static_cast<std::size_t>(s)];
      const double pair = 18e-6 * c.layers[static_cast<std::size_t>(c.slowest)];
      const double expected = before + m * pair;  // before: the F and B of stages < k
      CHECK(r.step_time_s == doctest::Approx(expected).epsilon(1e-9).scale(0));
      CHECK(r.bubble_fraction[static_cast<std::size_t>(c.slowest)] ==
            doctest::Approx(before / expected).epsilon(1e-9).scale(0));
    }
  }
}

TEST_CASE("Uneven stages: weights, activations and FLOPs follow each stage's layer count") {
  auto even = test::small_scenario(1, 1, 4, 8, 1);  // llama2-7b shapes, 8 layers
  auto uneven = even;
  uneven.parallel.stage_layers = {1, 3, 3, 1};
  const auto e = test::simulate_report(even);
  const auto u = test::simulate_report(uneven);
  // The model's FLOPs do not depend on where its layers sit.
  CHECK(u.model_flops_per_step == doctest::Approx(e.model_flops_per_step).epsilon(1e-12));
  CHECK(u.executed_flops_per_step == doctest::Approx(e.executed_flops_per_step).epsilon(1e-12));
  auto part = [](const strat::StepReport& r, int stage, const std::string& name) {
    for (const auto& [category, bytes] : r.memory[static_cast<std::size_t>(stage)].breakdown_bytes) {
      if (category == name) return bytes;
    }
    return -1.0;
  };
  const double layer = strat::layer_params_per_tp_rank(even.model, 1) * 2;  // bf16 weights
  // Stage 1 holds 3 layers instead of 2; stage 0 one layer and the embedding instead of two.
  CHECK(part(u, 1, "weights") - part(e, 1, "weights") == doctest::Approx(layer).epsilon(1e-9));
  CHECK(part(e, 0, "weights") - part(u, 0, "weights") == doctest::Approx(layer).epsilon(1e-9));
  // Activations at the peak scale with the layers held: stage 1 keeps 3/2 of the even split's
  // (1F1B keeps P-s micro-batches there in both; the layer count is the only difference).
  CHECK(part(u, 1, "activations") / part(e, 1, "activations") ==
        doctest::Approx(1.5).epsilon(1e-6));
  // The slower middle stages make the step longer than the even split's.
  CHECK(u.step_time_s > e.step_time_s);
}

// Interleaving with a virtual stage of no layer: Megatron builds it as one no-op layer, a clone
// of the hidden states (NoopTransformerLayer), as the Zero Bubble fork does for the chunks its
// layer padding empties; a stage without any layer stays an error.
TEST_CASE("interleaving: a virtual stage may hold no layer (a no-op layer), a stage may not") {
  const std::string chunked =
      R"({"pp": 8, "chunks": 3, "schedule": "interleaved-1f1b", "stage_layers": [0, )";
  std::string ones;
  for (int i = 0; i < 22; ++i) ones += "1, ";
  const auto padded = strat::parse_scenario(text_with(chunked + ones + "0]}", 22), "t.json");
  CHECK(padded.virtual_stage_layers(0) == 0);
  CHECK(padded.virtual_stage_layers(23) == 0);
  CHECK(padded.stage_layer_count(0) == 2);  // chunks 0, 8, 16 of stage 0: 0 + 1 + 1
  CHECK(padded.stage_layer_count(7) == 2);
  CHECK(padded.stage_layer_count(3) == 3);
  CHECK(padded.first_layer_of_virtual_stage(1) == 0);

  CHECK(has_problem(problems_of(text_with(R"({"pp": 8, "stage_layers": [3, 0, 3, 3, 3, 4, 3, 3]})", 22)),
                    "/parallel/stage_layers/1", "a stage without layers"));
  // Stage 0's three chunks (virtual stages 0, 8 and 16) all empty.
  std::string empty_stage = R"({"pp": 8, "chunks": 3, "schedule": "interleaved-1f1b", "stage_layers": [)";
  for (int v = 0; v < 24; ++v) {
    empty_stage += (v == 0 ? "" : ", ") + std::string(v % 8 == 0 ? "0" : (v == 1 ? "2" : "1"));
  }
  CHECK(has_problem(problems_of(text_with(empty_stage + "]}", 22)), "/parallel/stage_layers",
                    "stage 0 gets no layer in any of its 3 chunks"));
  CHECK(has_problem(problems_of(text_with(R"({"pp": 8, "stage_layers": [3, -2, 3, 3, 3, 4, 3, 3]})", 22)),
                    "/parallel/stage_layers/1", "an integer in [0, "));
}

TEST_CASE("a virtual stage of no layer runs the no-op layer's clone, one kernel per forward") {
  auto even = test::small_scenario(1, 1, 2, 4, 1);  // llama2-7b shapes, 8 layers, pp 2, m 4
  even.parallel.schedule = PipelineSchedule::kInterleaved;
  even.parallel.chunks = 2;
  auto padded = even;
  padded.model.layers = 6;
  padded.parallel.stage_layers = {0, 2, 2, 2};  // virtual stage 0 (stage 0, chunk 0) empty
  const cost::CostModel costs(padded.cluster);
  const auto built = strat::build_workload(padded, costs, {false});
  const sim::Workload& w = built.workload;
  int noop = 0, first_chunk_layers = 0;
  for (sim::OpId o = 0; o < w.op_count(); ++o) {
    const std::string& label = w.text(w.op(o).label);
    if (label.find("noop layer") != std::string::npos) {
      ++noop;
      CHECK(label.find("F V0 ") == 0);
      CHECK(w.op(o).duration > sim::Time::zero());
    }
    if (label.find("F L0 ") == 0) ++first_chunk_layers;
  }
  CHECK(noop == padded.micro_batches());  // one clone per micro-batch, forward only
  CHECK(first_chunk_layers > 0);          // layer 0 now sits on virtual stage 1
  const auto report = test::simulate_report(padded);
  const auto reference = test::simulate_report(even);
  // Two layers fewer, the same schedule: less work, a shorter step.
  CHECK(report.model_flops_per_step < reference.model_flops_per_step);
  CHECK(report.step_time_s < reference.step_time_s);
}
