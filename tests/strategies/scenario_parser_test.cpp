#include "../support/test_support.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "parser_problems.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/units.hpp"
#include "strategies/framework/framework_presets.hpp"
#include "strategies/input/model_presets.hpp"

namespace parasim::strat {
namespace {

namespace fs = std::filesystem;

using namespace parasim::test;



using test::has_problem;
using test::problems_of;

double bytes_of(std::string_view text) {
  std::string why;
  const auto v = cost::parse_bytes(text, &why);
  REQUIRE_MESSAGE(v.has_value(), why);
  return v->value;
}

double bytes_per_s_of(std::string_view text) {
  std::string why;
  const auto v = cost::parse_bandwidth(text, &why);
  REQUIRE_MESSAGE(v.has_value(), why);
  return v->bytes_per_s;
}

// Scenario text from its sections (JSON text each).
std::string scenario_text(const std::string& model, const std::string& cluster,
                          const std::string& parallel,
                          const std::string& training = R"({"global_batch": 64})") {
  return R"({"model": )" + model + R"(, "cluster": )" + cluster + R"(, "training": )" + training +
         R"(, "parallel": )" + parallel + "}";
}

// A scenario of gpt2-medium on `cluster`, for tests that vary the cluster.
std::string with_cluster(const std::string& cluster, const std::string& parallel) {
  return scenario_text(R"("gpt2-medium")", cluster, parallel);
}

// The explicit device and links of a cluster section, with the HBM capacity and NIC bandwidth
// given as text.
std::string explicit_cluster(const std::string& hbm_capacity, const std::string& nic) {
  return R"({"device": {"peak": {"bf16": "312 TFLOP/s"}, "hbm_capacity": ")" + hbm_capacity +
         R"(", "hbm_bandwidth": "2039 GB/s"}, "gpus_per_node": 8,
             "intra_node": {"bandwidth": "300 GB/s", "latency": "1 us"},
             "inter_node": {"bandwidth": ")" +
         nic + R"(", "latency": "5 us"}})";
}

}  // namespace

TEST_CASE("every shipped scenario parses and satisfies the Scenario invariants") {
  const auto files = json_files_in(kSourceDir / "scenarios");
  REQUIRE(files.size() >= 6);
  for (const auto& file : files) {
    CAPTURE(file.string());
    Scenario s;
    try {
      s = load_scenario(file.string());
    } catch (const cost::InputError& e) {
      FAIL(e.what());
    }
    const auto& m = s.model;
    const auto& c = s.cluster;
    const auto& t = s.training;
    const auto& p = s.parallel;
    CHECK(s.source_file == file.string());
    CHECK(!s.name.empty());
    CHECK(!s.description.empty());
    CHECK(static_cast<long long>(p.dp) * p.tp * p.pp * p.cp == c.total_gpus());
    CHECK(m.heads % p.tp == 0);
    CHECK(m.kv_heads % p.tp == 0);
    CHECK(m.hidden % m.heads == 0);
    CHECK(m.heads % m.kv_heads == 0);
    // Even stages, or a split given with the scenario (DeepSeek-V3's 61 layers on 16 stages).
    CHECK((m.layers % p.pp == 0 || !p.stage_layers.empty()));
    CHECK(s.stage_layer_count(0) >= 1);
    CHECK(t.global_batch % (t.micro_batch * p.dp) == 0);
    CHECK(s.micro_batches() >= 1);
    CHECK(p.zero_stage >= 0);
    CHECK(p.zero_stage <= 3);
    CHECK((!p.sequence_parallel || p.tp > 1));
    CHECK((p.tp >= c.gpus_per_node || c.gpus_per_node % p.tp == 0));
    CHECK(c.device.peak(t.precision).flop_per_s > 0);
    CHECK(c.device.hbm_capacity.value > 0);
    CHECK(c.device.hbm_bandwidth.bytes_per_s > 0);
    CHECK(c.intra_node.bandwidth.bytes_per_s > 0);
    CHECK(c.inter_node.bandwidth.bytes_per_s > 0);
    CHECK(p.dp_bucket.value >= 0);  // 0: one bucket per stage (the framework's contiguous buffer)
    // Shipped scenarios point editors at the schema and say what they show.
    const auto root = nlohmann::json::parse(read_text(file));
    CHECK(root.value("$schema", "") == "../docs/scenario.schema.json");
    CHECK(root.value("name", "") == file.stem().string());
  }
}

TEST_CASE("the benchmark scenario is GPT-3 175B on 1024 H100s with 64 micro-batches") {
  const Scenario s =
      load_scenario((kSourceDir / "scenarios" / "gpt3-175b-1024gpu.json").string());
  CHECK(s.model.name == "gpt3-175b");
  CHECK(s.cluster.name == "dgx-h100");
  CHECK(s.cluster.device.name == "H100-SXM5-80GB");
  CHECK(s.cluster.nodes == 128);
  CHECK(s.cluster.total_gpus() == 1024);
  CHECK(s.parallel.tp == 8);
  CHECK(s.parallel.pp == 16);
  CHECK(s.parallel.dp == 8);
  CHECK(s.parallel.schedule == PipelineSchedule::kOneFOneB);
  CHECK(s.parallel.sequence_parallel);
  CHECK(s.parallel.zero_stage == 1);
  CHECK(s.training.micro_batch == 1);
  CHECK(s.training.global_batch == 512);
  CHECK(s.micro_batches() == 64);
  CHECK(s.stage_layer_count(0) == 6);
  CHECK(s.training.precision == cost::Dtype::kBf16);
  CHECK(s.training.recompute == cost::Recompute::kSelective);
  CHECK(s.optimizer.kind == OptimizerKind::kAdamW);
}

TEST_CASE("the custom-cluster scenario reads every field without presets") {
  const Scenario s = load_scenario((kSourceDir / "scenarios" / "custom-cluster.json").string());
  CHECK(s.model.name == "gpt-0.7b-custom");
  CHECK(s.model.layers == 12);
  CHECK(s.model.hidden == 2048);
  CHECK(s.model.heads == 16);
  CHECK(s.cluster.name == "perlmutter-a100-40gb");
  CHECK(s.cluster.device.name == "A100-SXM4-40GB");
  CHECK(s.cluster.device.hbm_capacity.value == doctest::Approx(40e9).scale(0));
  CHECK(s.cluster.device.peak_fp32.flop_per_s == doctest::Approx(19.5e12).scale(0));
  CHECK(s.cluster.device.peak_fp8.flop_per_s == 0);
  CHECK(s.cluster.device.sm_count == 108);
  CHECK(s.cluster.device.kernel_launch_overhead == sim::Time::us(4));
  CHECK(s.cluster.inter_node.bandwidth.bytes_per_s == doctest::Approx(25e9).scale(0));  // 200 Gb/s
  CHECK(s.cluster.intra_node.latency == sim::Time::us(1));
  CHECK(s.cluster.total_gpus() == 8);
  CHECK(s.parallel.dp_bucket.value == doctest::Approx(25e6).scale(0));  // given: the framework's yields
}

TEST_CASE("every malformed fixture fails with exactly the expected problems") {
  const fs::path dir = kSourceDir / "tests" / "data" / "bad";
  const ExpectedProblems expected = expected_problems(dir);
  REQUIRE(expected.size() >= 12);

  // Every fixture has expectations and every expectation has a fixture.
  std::set<std::string> fixtures;
  for (const auto& file : json_files_in(dir)) fixtures.insert(file.filename().string());
  for (const auto& name : fixtures) {
    CAPTURE(name);
    CHECK(expected.count(name) == 1);
  }
  for (const auto& entry : expected) {
    // Named references, not structured bindings: clang 14 cannot capture one in CAPTURE's lambda.
    const std::string& name = entry.first;
    CAPTURE(name);
    CHECK(fixtures.count(name) == 1);
  }
  REQUIRE(expected.count("three-problems.json") == 1);
  CHECK(expected.at("three-problems.json").size() == 3);

  for (const auto& entry : expected) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 (see above)
    const auto& pairs = entry.second;
    CAPTURE(name);
    const std::string path = (dir / name).string();
    bool threw = false;
    try {
      load_scenario(path);
    } catch (const cost::InputError& e) {
      threw = true;
      const auto& problems = e.diagnostics().problems();
      CAPTURE(e.what());
      CHECK(e.diagnostics().file() == path);
      CHECK(problems.size() == pairs.size());
      for (const auto& pair : pairs) {
        const std::string& json_path = pair.first;  // not a structured binding: clang 14
        const std::string& substring = pair.second;
        CAPTURE(json_path);
        CAPTURE(substring);
        CHECK(has_problem(problems, json_path, substring));
      }
      // "FILE: /json/path: message", one line per problem.
      std::istringstream text(e.what());
      std::string shown;
      std::size_t count = 0;
      while (std::getline(text, shown)) {
        CHECK(shown.rfind(path + ": /", 0) == 0);
        ++count;
      }
      CHECK(count == problems.size());
    }
    CHECK_MESSAGE(threw, "no cost::InputError");
  }
}

TEST_CASE("unit text keeps GB and GiB apart, reads bits, and rejects bare numbers") {
  CHECK(bytes_of("80 GiB") == 80.0 * 1024 * 1024 * 1024);
  CHECK(bytes_of("80 GB") == 80e9);
  CHECK(bytes_of("80GiB") == 80.0 * 1024 * 1024 * 1024);
  CHECK(bytes_of("25 MB") == 25e6);
  CHECK(bytes_per_s_of("400 Gb/s") == doctest::Approx(50e9).scale(0));
  CHECK(bytes_per_s_of("400 Gbit/s") == doctest::Approx(50e9).scale(0));
  CHECK(bytes_per_s_of("450 GB/s") == doctest::Approx(450e9).scale(0));
  std::string why;
  const auto peak = cost::parse_flop_rate("989.4 TFLOP/s", &why);
  REQUIRE(peak.has_value());
  CHECK(peak->flop_per_s == doctest::Approx(989.4e12).scale(0));
  CHECK(cost::parse_time("5 us", &why) == sim::Time::us(5));

  CHECK_FALSE(cost::parse_bytes("80", &why).has_value());
  CHECK(why.find("bare number") != std::string::npos);
  CHECK_FALSE(cost::parse_bandwidth("900 GB", &why).has_value());
  CHECK(why.find("unknown unit \"GB\"") != std::string::npos);
  CHECK_FALSE(cost::parse_bytes("80 GB/s", &why).has_value());
  CHECK_FALSE(cost::parse_bytes("-80 GiB", &why).has_value());
  CHECK_FALSE(cost::parse_bytes("eighty GiB", &why).has_value());

  // Formatting and parsing back agree.
  for (double v : {80.0 * cost::kGiB, 1.5 * cost::kMiB, 123.0, 3.0e12}) {
    CAPTURE(v);
    const auto back = cost::parse_bytes(cost::format_bytes(cost::Bytes{v}), &why);
    REQUIRE(back.has_value());
    CHECK(back->value == doctest::Approx(v).epsilon(1e-3).scale(0));
    const auto back_si = cost::parse_bytes(cost::format_bytes_si(cost::Bytes{v}), &why);
    REQUIRE(back_si.has_value());
    CHECK(back_si->value == doctest::Approx(v).epsilon(1e-3).scale(0));
  }
  const auto bw = cost::parse_bandwidth(cost::format_bandwidth(cost::Bandwidth{50e9}), &why);
  REQUIRE(bw.has_value());
  CHECK(bw->bytes_per_s == doctest::Approx(50e9).scale(0));

  // The same through a scenario: GiB vs GB capacity, bits on the NIC.
  const Scenario gib =
      parse_scenario(with_cluster(explicit_cluster("80 GiB", "400 Gb/s"), R"({"dp": 8})"), "x");
  const Scenario gb =
      parse_scenario(with_cluster(explicit_cluster("80 GB", "400 Gb/s"), R"({"dp": 8})"), "x");
  CHECK(gib.cluster.device.hbm_capacity.value == 80.0 * 1024 * 1024 * 1024);
  CHECK(gb.cluster.device.hbm_capacity.value == 80e9);
  CHECK(gib.cluster.inter_node.bandwidth.bytes_per_s == doctest::Approx(50e9).scale(0));
  CHECK(gib.cluster.name == "custom");

  // A bare number in a scenario names the field and asks for a unit.
  const auto bare = problems_of(with_cluster(
      R"({"preset": "dgx-h100", "inter_node": {"bandwidth": 50}})", R"({"dp": 8})"));
  CHECK(bare.size() == 1);
  CHECK(has_problem(bare, "/cluster/inter_node/bandwidth", "bare number"));

  // Gradients in fp32 under bf16; any other mismatch with the training precision is refused.
  const auto fp32_grads = parse_scenario(
      scenario_text(R"("gpt2-medium")", R"("dgx-h100")", R"({"dp": 8})",
                    R"({"global_batch": 8, "grad_precision": "fp32"})"),
      "x");
  CHECK(fp32_grads.training.fp32_gradients);
  CHECK(fp32_grads.training.gradient_bytes() == 4);
  const auto fp16_grads = problems_of(scenario_text(R"("gpt2-medium")", R"("dgx-h100")",
                                                    R"({"dp": 8})",
                                                    R"({"global_batch": 8, "grad_precision": "fp16"})"));
  CHECK(has_problem(fp16_grads, "/training/grad_precision", "training precision (bf16) or in fp32"));

  // A mesh's per-peer bandwidth: intra-node only, positive, at most the GPU's bandwidth.
  const auto mesh = parse_scenario(
      with_cluster(R"({"preset": "dgx-h100", "intra_node": {"peer_bandwidth": "50 GB/s"}})",
                   R"({"dp": 8})"),
      "x");
  CHECK(mesh.cluster.intra_node.peer_bandwidth.bytes_per_s == 50e9);
  CHECK(parse_scenario(with_cluster(R"("mi300x-8x")", R"({"dp": 8})"), "x")
            .cluster.intra_node.peer_bandwidth.bytes_per_s == 64e9);
  const auto peer = problems_of(with_cluster(
      R"({"preset": "dgx-h100", "intra_node": {"peer_bandwidth": "500 GB/s"},
          "inter_node": {"peer_bandwidth": "10 GB/s"}})",
      R"({"dp": 8})"));
  CHECK(peer.size() == 2);
  CHECK(has_problem(peer, "/cluster/intra_node/peer_bandwidth", "exceeds the GPU's intra-node"));
  CHECK(has_problem(peer, "/cluster/inter_node/peer_bandwidth", "unknown key"));
  const auto slower = problems_of(with_cluster(
      R"({"preset": "mi300x-8x", "intra_node": {"bandwidth": "50 GB/s"}})", R"({"dp": 8})"));
  CHECK(has_problem(slower, "/cluster/intra_node/peer_bandwidth", "64.00 GB/s to one peer exceeds"));
}

TEST_CASE("a typo'd key is reported with a did-you-mean suggestion") {
  const auto problems = problems_of(R"({"model": "gpt2-medium", "cluster": "dgx-a100-80gb",
      "training": {"global_bach": 64}, "parallel": {"dp": 8, "sequence_paralel": false}})");
  CHECK(has_problem(problems, "/training/global_bach", "did you mean \"global_batch\""));
  CHECK(has_problem(problems, "/training/global_batch", "required field is missing"));
  CHECK(has_problem(problems, "/parallel/sequence_paralel", "did you mean \"sequence_parallel\""));
  CHECK(problems.size() == 3);

  // Nothing close: the known keys are listed instead.
  const auto far = problems_of(R"({"model": "gpt2-medium", "cluster": "dgx-a100-80gb",
      "training": {"global_batch": 64}, "parallel": {"dp": 8}, "zzzzzz": 1})");
  CHECK(has_problem(far, "/zzzzzz", "known keys here:"));
}

TEST_CASE("a preset with overrides keeps the preset's fields and changes only the named ones") {
  const Scenario s = parse_scenario(
      with_cluster(R"({"preset": "dgx-h100", "nodes": 4})", R"({"dp": 32})"), "x");
  CHECK(s.cluster.name == "dgx-h100");
  CHECK(s.cluster.device.name == "H100-SXM5-80GB");
  CHECK(s.cluster.device.peak_bf16.flop_per_s == doctest::Approx(989.4e12).scale(0));
  CHECK(s.cluster.gpus_per_node == 8);
  CHECK(s.cluster.nodes == 4);
  CHECK(s.cluster.total_gpus() == 32);
  CHECK(s.cluster.intra_node.bandwidth.bytes_per_s == doctest::Approx(450e9).scale(0));
  CHECK(s.cluster.inter_node.bandwidth.bytes_per_s == doctest::Approx(50e9).scale(0));

  // A nested override replaces one device field and keeps the rest.
  const Scenario hbm = parse_scenario(
      with_cluster(R"({"preset": "dgx-h100", "device": {"hbm_capacity": "96 GB"}})",
                   R"({"dp": 8})"),
      "x");
  CHECK(hbm.cluster.device.hbm_capacity.value == doctest::Approx(96e9).scale(0));
  CHECK(hbm.cluster.device.name == "H100-SXM5-80GB");
  CHECK(hbm.cluster.device.hbm_bandwidth.bytes_per_s == doctest::Approx(3350e9).scale(0));

  // The plain preset name is one node.
  const Scenario one = parse_scenario(with_cluster(R"("dgx-h100")", R"({"dp": 8})"), "x");
  CHECK(one.cluster.nodes == 1);
  CHECK(one.cluster.device.name == "H100-SXM5-80GB");

  // Model presets: overrides keep the rest of the shape.
  const Scenario m = parse_scenario(R"({"model": {"preset": "llama2-7b", "seq_len": 2048},
      "cluster": "dgx-h100", "training": {"global_batch": 8}, "parallel": {"dp": 8}})",
                                    "x");
  CHECK(m.model.name == "llama2-7b");
  CHECK(m.model.seq_len == 2048);
  CHECK(m.model.layers == 32);
  CHECK(m.model.ffn_hidden == 11008);
  CHECK(m.model.mlp == MlpKind::kSwiglu);

  // An unknown preset names the presets there are.
  const auto bad = problems_of(with_cluster(R"({"preset": "dgx-b900"})", R"({"dp": 8})"));
  CHECK(has_problem(bad, "/cluster/preset", "unknown cluster preset \"dgx-b900\""));
  CHECK(has_problem(bad, "/cluster/preset", "dgx-h100"));
}

TEST_CASE("defaults of optional fields") {
  const Scenario s = parse_scenario(R"({"model": {"layers": 2, "hidden": 64, "heads": 4,
      "vocab": 100, "seq_len": 32}, "cluster": {"preset": "dgx-h100", "gpus_per_node": 1},
      "training": {"global_batch": 8}, "parallel": {}})",
                                    "defaults.json");
  CHECK(s.name == "defaults.json");
  CHECK(s.model.name == "custom");
  CHECK(s.model.kv_heads == 4);
  CHECK(s.model.ffn_hidden == 256);
  CHECK(s.model.mlp == MlpKind::kGelu);
  CHECK(s.model.norm == NormKind::kLayerNorm);
  CHECK(s.training.micro_batch == 1);
  CHECK(s.training.precision == cost::Dtype::kBf16);
  CHECK(s.training.recompute == cost::Recompute::kNone);
  CHECK(s.parallel.schedule == PipelineSchedule::kOneFOneB);
  CHECK(s.parallel.zero_stage == 0);
  CHECK_FALSE(s.parallel.sequence_parallel);
  // The default framework, Megatron-LM, reduces its contiguous gradient buffer as one bucket.
  CHECK(s.training.framework.name == "megatron-lm");
  CHECK(s.parallel.dp_bucket.value == 0);
  CHECK(s.optimizer.kind == OptimizerKind::kAdamW);
  CHECK(s.cluster.total_gpus() == 1);
  CHECK(s.micro_batches() == 8);
}

TEST_CASE("limits refuse inputs too large to simulate") {
  const std::string text = with_cluster(R"({"preset": "dgx-h100", "nodes": 4})", R"({"dp": 32})");
  CHECK_NOTHROW(parse_scenario(text, "x"));

  ScenarioLimits small_file;
  small_file.max_file_bytes = 16;
  CHECK_THROWS_AS(parse_scenario(text, "x", small_file), cost::InputError);

  ScenarioLimits few_micro_batches;
  few_micro_batches.max_micro_batches = 1;  // 64 / (1 x 32) = 2 micro-batches
  try {
    parse_scenario(text, "x", few_micro_batches);
    FAIL("expected cost::InputError");
  } catch (const cost::InputError& e) {
    CHECK(has_problem(e.diagnostics().problems(), "/training/global_batch", "over the limit"));
  }

  const auto gpus = problems_of(with_cluster(R"({"preset": "dgx-h100", "nodes": 131073})",
                                             R"({"dp": 1048584})"));
  CHECK(has_problem(gpus, "/cluster", "over the limit of 1048576 GPUs"));
  const auto layers = problems_of(R"({"model": {"preset": "gpt2-medium", "layers": 4097},
      "cluster": "dgx-h100", "training": {"global_batch": 8}, "parallel": {"dp": 8}})");
  CHECK(has_problem(layers, "/model/layers", "expected an integer in [1, 4096]"));
}

TEST_CASE("the cross-field rules name the field to change") {
  // llama2-70b has 8 KV heads: tp 16 divides its 64 query heads but not them.
  const auto kv = problems_of(
      scenario_text(R"("llama2-70b")", R"({"preset": "dgx-h100", "nodes": 2})", R"({"tp": 16})"));
  CHECK(kv.size() == 1);
  CHECK(has_problem(kv, "/parallel/tp", "must divide the number of kv heads (8)"));

  // llama2-13b has 40 layers: 16 stages do not split them evenly.
  const auto pp = problems_of(
      scenario_text(R"("llama2-13b")", R"({"preset": "dgx-h100", "nodes": 2})", R"({"pp": 16})"));
  CHECK(pp.size() == 1);
  CHECK(has_problem(pp, "/parallel/pp", "must divide the layer count (40)"));

  // tp must divide gpus_per_node when it is smaller than a node; the GPU count is also off.
  const auto tp_node = problems_of(scenario_text(
      R"({"layers": 2, "hidden": 96, "heads": 6, "vocab": 100, "seq_len": 32})", R"("dgx-h100")",
      R"({"tp": 3, "pp": 2})", R"({"global_batch": 8})"));
  CHECK(tp_node.size() == 2);
  CHECK(has_problem(tp_node, "/parallel/tp", "must divide gpus_per_node (8)"));
  CHECK(has_problem(tp_node, "/parallel", "= 6 GPUs, but the cluster has 8"));

  // A precision the device has no peak for.
  const auto fp16 = problems_of(scenario_text(R"("gpt2-medium")",
                                              explicit_cluster("80 GB", "200 Gb/s"),
                                              R"({"dp": 8})",
                                              R"({"global_batch": 8, "precision": "fp16"})"));
  CHECK(fp16.size() == 1);
  CHECK(has_problem(fp16, "/training/precision", "no fp16 peak FLOP rate"));

  // Every problem of a file at once: field problems in three sections.
  const auto many = problems_of(scenario_text(R"({"preset": "gpt2-medium", "heads": "16"})",
                                              R"({"preset": "dgx-h100", "nodes": 0})",
                                              R"({"schedule": "interleaved", "zero_stage": 4})",
                                              R"({"global_batch": 8.0})"));
  CHECK(many.size() == 5);
  CHECK(has_problem(many, "/model/heads", "expected an integer, got a string"));
  CHECK(has_problem(many, "/cluster/nodes", "expected an integer in [1, 1048576], got 0"));
  CHECK(has_problem(many, "/parallel/schedule", "expected one of \"gpipe\", \"1f1b\""));
  CHECK(has_problem(many, "/parallel/zero_stage", "expected an integer in [0, 3], got 4"));
  CHECK(has_problem(many, "/training/global_batch", "expected an integer, got a number"));
}

TEST_CASE("the JSON Schema and the format guide list exactly the presets there are") {
  const auto schema =
      nlohmann::json::parse(read_text(kSourceDir / "docs" / "scenario.schema.json"));
  const std::string guide = read_text(kSourceDir / "docs" / "scenario.md");
  std::set<std::string> schema_models, schema_clusters, models, clusters;
  for (const auto& n : schema.at("$defs").at("model_preset_name").at("enum")) {
    schema_models.insert(n.get<std::string>());
  }
  for (const auto& n : schema.at("$defs").at("cluster_preset_name").at("enum")) {
    schema_clusters.insert(n.get<std::string>());
  }
  for (const auto& p : model_presets()) models.insert(p.name);
  for (const auto& p : cost::cluster_presets()) clusters.insert(p.name);
  CHECK(schema_models == models);
  CHECK(schema_clusters == clusters);
  for (const auto& name : models) {
    CAPTURE(name);
    CHECK(guide.find("| `" + name + "` |") != std::string::npos);
  }
  for (const auto& name : clusters) {
    CAPTURE(name);
    CHECK(guide.find("| `" + name + "` |") != std::string::npos);
  }
}

TEST_CASE(
    "the JSON Schema lists exactly the framework presets and the override keys the parser takes") {
  const auto schema =
      nlohmann::json::parse(read_text(kSourceDir / "docs" / "scenario.schema.json"));
  const auto& defs = schema.at("$defs");
  CHECK(schema.at("$defs").at("training").at("properties").at("framework") ==
        nlohmann::json{{"$ref", "#/$defs/framework"}});
  std::set<std::string> in_schema, presets;
  for (const auto& n : defs.at("framework_preset_name").at("enum")) {
    in_schema.insert(n.get<std::string>());
  }
  for (const auto& p : framework_presets()) presets.insert(p.name);
  CHECK(in_schema == presets);
  // Every key of the override object the schema lists is one the parser accepts (a value of the
  // schema's type for it parses), and the parser refuses a key the schema does not list.
  const auto& object = defs.at("framework").at("oneOf").at(1).at("properties");
  const std::map<std::string, std::string> sample_of_section = {{"host", R"("1 us")"},
                                                                {"fusions", "true"}};
  for (auto section_it = object.begin(); section_it != object.end(); ++section_it) {
    const std::string section = section_it.key();
    const auto& body = section_it.value();
    if (!body.contains("properties")) continue;
    const auto& fields = body.at("properties");
    for (auto field_it = fields.begin(); field_it != fields.end(); ++field_it) {
      const std::string key = field_it.key();
      const auto& field = field_it.value();
      CAPTURE(section);
      CAPTURE(key);
      std::string value = "1";
      if (field.value("type", "") == "boolean") value = "true";
      if (field.contains("enum")) value = "\"" + field.at("enum").at(0).get<std::string>() + "\"";
      if (const auto it = sample_of_section.find(section);
          it != sample_of_section.end() && !field.contains("type")) {
        value = it->second;
      }
      const std::string framework =
          R"({"preset": "deepspeed", ")" + section + R"(": {")" + key + R"(": )" + value + "}}";
      CHECK_NOTHROW(
          parse_scenario(scenario_text(R"("gpt2-medium")", R"("dgx-a100-80gb")", R"({"dp": 8})",
                                       R"({"global_batch": 64, "framework": )" + framework + "}"),
                         "test.json"));
    }
  }
  const auto refused = problems_of(scenario_text(
      R"("gpt2-medium")", R"("dgx-a100-80gb")", R"({"dp": 8})",
      R"({"global_batch": 64, "framework": {"preset": "deepspeed", "host": {"launch": "1 us"}}})"));
  CHECK(!object.at("host").at("properties").contains("launch"));
  CHECK(has_problem(refused, "/training/framework/host/launch", ""));
  const auto zero3 = problems_of(scenario_text(
      R"("gpt2-medium")", R"("dgx-a100-80gb")", R"({"dp": 8, "zero_stage": 3})",
      R"({"global_batch": 64, "framework": {"preset": "deepspeed", "zero3": )"
      R"({"gather": "per-block", "persistence_threshold": -1, "prefetch_bucket_size": -1, )"
      R"("max_live_parameters": "1e9", "max_reuse_distance": 1e16, "contiguous_gradients": 1}}})"));
  CHECK(has_problem(zero3, "/training/framework/zero3/gather", "per-module"));
  CHECK(has_problem(zero3, "/training/framework/zero3/persistence_threshold", ""));
  // Every problem of the section at once, each at its path.
  for (const char* key : {"prefetch_bucket_size", "max_live_parameters", "max_reuse_distance",
                          "contiguous_gradients"}) {
    CAPTURE(key);
    CHECK(has_problem(zero3, std::string("/training/framework/zero3/") + key, ""));
  }
}

}  // namespace parasim::strat

namespace parasim::strat {

TEST_CASE("device.clock_mhz scales the peaks it does not give from the preset's boost clock") {
  // H100 SXM5's peaks are quoted at 1,830 MHz: at 1,464 MHz (0.8 of it) every peak is 0.8 x.
  const Scenario s = parse_scenario(
      with_cluster(R"({"preset": "dgx-h100", "device": {"clock_mhz": 1464}})", R"({"dp": 8})"),
      "x");
  const cost::DeviceSpec& d = s.cluster.device;
  CHECK(d.clock_mhz == 1464);
  CHECK(d.peak_bf16.flop_per_s == doctest::Approx(989.4e12 * 1464 / 1830));
  CHECK(d.peak_fp8.flop_per_s == doctest::Approx(1978.9e12 * 0.8));
  CHECK(d.peak_tf32.flop_per_s == doctest::Approx(494.7e12 * 0.8));
  CHECK(d.peak_fp32.flop_per_s == doctest::Approx(66.9e12 * 0.8));
  CHECK(d.hbm_bandwidth.bytes_per_s == 3350e9);  // the memory clock is not the SM clock
  CHECK(d.kernels == cost::find_cluster_preset("dgx-h100")->spec.device.kernels);

  // A peak given beside the clock is taken as it is; the others follow the clock.
  const Scenario given = parse_scenario(
      with_cluster(R"({"preset": "dgx-b200", "device": {"clock_mhz": 1480,
                      "peak": {"fp8": "3 PFLOP/s"}}})",
                   R"({"dp": 8})"),
      "x");
  CHECK(given.cluster.device.peak_fp8.flop_per_s == 3e15);
  CHECK(given.cluster.device.peak_bf16.flop_per_s == doctest::Approx(2250e12 * 0.8));
  CHECK(given.cluster.device.peak_fp4.flop_per_s == doctest::Approx(9000e12 * 0.8));

  // At the boost clock nothing changes; above it is refused.
  const Scenario boost = parse_scenario(
      with_cluster(R"({"preset": "dgx-h100", "device": {"clock_mhz": 1830}})", R"({"dp": 8})"),
      "x");
  CHECK(boost.cluster.device.peak_bf16.flop_per_s == 989.4e12);
  const auto over = problems_of(
      with_cluster(R"({"preset": "dgx-h100", "device": {"clock_mhz": 1980}})", R"({"dp": 8})"));
  CHECK(has_problem(over, "/cluster/device/clock_mhz", "above the 1830 MHz boost clock"));
  CHECK(over.size() == 1);
}

TEST_CASE("a clock on a device whose peaks' clock is unknown needs every peak") {
  // GB300's clock is not published: "unknown: give the peak", naming the peaks to give.
  const auto unknown = problems_of(with_cluster(
      R"({"preset": "gb300-nvl72", "device": {"clock_mhz": 1500}})", R"({"dp": 72})"));
  REQUIRE(unknown.size() == 1);
  CHECK(has_problem(unknown, "/cluster/device/clock_mhz", "give the peak"));
  CHECK(has_problem(unknown, "/cluster/device/clock_mhz",
                    "/cluster/device/peak/bf16, /cluster/device/peak/fp16, "
                    "/cluster/device/peak/fp32, /cluster/device/peak/tf32, "
                    "/cluster/device/peak/fp8, /cluster/device/peak/fp4"));
  // Telling the clock of the peaks makes it scalable.
  const Scenario told = parse_scenario(
      scenario_text(R"("gpt2-medium")", R"({"preset": "gb300-nvl72", "device": {
                      "clock_mhz": 1500, "peak_clock_mhz": 2000}})",
                    R"({"dp": 72})", R"({"global_batch": 72})"),
      "x");
  CHECK(told.cluster.device.peak_bf16.flop_per_s == doctest::Approx(2500e12 * 0.75));
  // A written-out device with its one peak given: the clock is only recorded.
  const Scenario custom = parse_scenario(
      with_cluster(R"({"device": {"peak": {"bf16": "312 TFLOP/s"}, "hbm_capacity": "80 GB",
                      "hbm_bandwidth": "2039 GB/s", "clock_mhz": 1200}, "gpus_per_node": 8,
                      "intra_node": {"bandwidth": "300 GB/s", "latency": "1 us"},
                      "inter_node": {"bandwidth": "25 GB/s", "latency": "5 us"}})",
                   R"({"dp": 8})"),
      "x");
  CHECK(custom.cluster.device.peak_bf16.flop_per_s == doctest::Approx(312e12));
  CHECK(custom.cluster.device.clock_mhz == 1200);
}

TEST_CASE("device.power_limit below the TDP needs the clock or the peaks") {
  // H100 SXM5 is quoted at 700 W: a 500 W cap alone leaves the clock unknown.
  const auto capped = problems_of(with_cluster(
      R"({"preset": "dgx-h100", "device": {"power_limit": 500}})", R"({"dp": 8})"));
  REQUIRE(capped.size() == 1);
  CHECK(has_problem(capped, "/cluster/device/power_limit",
                    "parasim does not know the clock a 500 W limit gives H100-SXM5-80GB (its "
                    "TDP of 700 W)"));
  CHECK(has_problem(capped, "/cluster/device/power_limit", "give the peak"));
  CHECK(has_problem(capped, "/cluster/device/power_limit", "device.clock_mhz"));

  // With the clock the cap holds, accepted and scaled.
  const Scenario clocked = parse_scenario(
      with_cluster(R"({"preset": "dgx-h100", "device": {"power_limit": 500,
                      "clock_mhz": 1372.5}})",
                   R"({"dp": 8})"),
      "x");
  CHECK(clocked.cluster.device.power_limit_watts == 500);
  CHECK(clocked.cluster.device.peak_bf16.flop_per_s == doctest::Approx(989.4e12 * 0.75));

  // With every non-zero peak given: taken as they are.
  const Scenario peaks = parse_scenario(
      with_cluster(R"({"preset": "dgx-h100", "device": {"power_limit": 500, "peak": {
                      "bf16": "700 TFLOP/s", "fp16": "700 TFLOP/s", "fp32": "50 TFLOP/s",
                      "tf32": "350 TFLOP/s", "fp8": "1400 TFLOP/s"}}})",
                   R"({"dp": 8})"),
      "x");
  CHECK(peaks.cluster.device.peak_bf16.flop_per_s == 700e12);
  CHECK(peaks.cluster.device.power_limit_watts == 500);

  // Some peaks given: the rest are named.
  const auto some = problems_of(with_cluster(
      R"({"preset": "dgx-h100", "device": {"power_limit": 500, "peak": {"bf16": "700 TFLOP/s"}}})",
      R"({"dp": 8})"));
  CHECK(has_problem(some, "/cluster/device/power_limit",
                    "/cluster/device/peak/fp16, /cluster/device/peak/fp32, "
                    "/cluster/device/peak/tf32, /cluster/device/peak/fp8)"));

  // At or above the TDP: nothing changes.
  const Scenario full = parse_scenario(
      with_cluster(R"({"preset": "dgx-h100", "device": {"power_limit": 700}})", R"({"dp": 8})"),
      "x");
  CHECK(full.cluster.device.peak_bf16.flop_per_s == 989.4e12);
  CHECK(full.cluster.device.power_limit_watts == 700);

  // Out of range, and the wrong type.
  const auto zero = problems_of(with_cluster(
      R"({"preset": "dgx-h100", "device": {"power_limit": 0}})", R"({"dp": 8})"));
  CHECK(has_problem(zero, "/cluster/device/power_limit", ""));
  const auto text = problems_of(with_cluster(
      R"({"preset": "dgx-h100", "device": {"clock_mhz": "1.5 GHz"}})", R"({"dp": 8})"));
  CHECK(has_problem(text, "/cluster/device/clock_mhz", ""));
}

}  // namespace parasim::strat

namespace parasim::strat {

TEST_CASE("cluster.network reads a fat tree; rails-only has no spine to give") {
  const Scenario s = parse_scenario(
      with_cluster(R"({"preset": "dgx-b300", "nodes": 4,
                      "network": {"nodes_per_leaf": 2, "oversubscription": 1.5}})",
                   R"({"dp": 32})"),
      "x");
  CHECK(s.cluster.network.nodes_per_leaf == 2);
  CHECK(s.cluster.network.oversubscription == 1.5);
  CHECK(s.cluster.inter_node.bandwidth.bytes_per_s == 100e9);  // 800 Gb/s
  const Scenario plain = parse_scenario(with_cluster(R"("dgx-h100")", R"({"dp": 8})"), "x");
  CHECK_FALSE(plain.cluster.network.enabled());

  const auto under = problems_of(with_cluster(
      R"({"preset": "dgx-h100", "network": {"nodes_per_leaf": 4, "oversubscription": 0.5}})",
      R"({"dp": 8})"));
  CHECK(has_problem(under, "/cluster/network/oversubscription", ""));
  const auto missing = problems_of(with_cluster(
      R"({"preset": "dgx-h100", "network": {"oversubscription": 2}})", R"({"dp": 8})"));
  CHECK(has_problem(missing, "/cluster/network/nodes_per_leaf", ""));
  const auto rails = problems_of(with_cluster(
      R"({"preset": "dgx-h100", "rails_only": true,
          "network": {"nodes_per_leaf": 4, "oversubscription": 2}})",
      R"({"dp": 8})"));
  CHECK(has_problem(rails, "/cluster/network", "a rails-only fabric has no spine"));
}

}  // namespace parasim::strat
