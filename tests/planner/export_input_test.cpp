// What `parasim export` reads: a scenario, or a plan {"parasim_plan": 1, "scenario": {...}}
// whose problems are reported under /scenario; and the command around it (exit codes, --out
// written only on success, --version checked).
#include <doctest/doctest.h>

#include <sstream>

#include "cli/export_command.hpp"
#include "export_test_support.hpp"

using namespace parasim::test;
using parasim::exporter::parse_export_input;

namespace {

std::string problems_of(const std::string& text) {
  try {
    parse_export_input(text, "p.json");
  } catch (const parasim::cost::InputError& e) {
    return e.what();
  }
  return "";
}

const char* kScenario = R"({"model": "llama2-7b", "cluster": "dgx-h100",
    "training": {"global_batch": 64, "micro_batch": 2},
    "parallel": {"dp": 2, "tp": 2, "pp": 2, "sequence_parallel": true}})";

}  // namespace

TEST_CASE("a plan file is read through its scenario; its other keys are ignored") {
  const auto in =
      parse_export_input(read_text(kSourceDir / "tests/data/plan-llama2-7b.json"), "plan.json");
  CHECK(in.is_plan);
  CHECK(in.path_prefix == "/scenario");
  CHECK(in.scenario.name == "llama2-7b-plan");
  CHECK(in.scenario.parallel.dp == 8);
  const auto plain = parse_export_input(kScenario, "s.json");
  CHECK_FALSE(plain.is_plan);
  CHECK(plain.path_prefix.empty());
}

TEST_CASE("a bad plan names the plan's JSON paths") {
  CHECK(problems_of(R"({"parasim_plan": 2, "scenario": {}})") ==
        "p.json: /parasim_plan: expected the plan format version 1 (this parasim reads plans of "
        "version 1), got 2\n");
  CHECK(
      problems_of(R"({"parasim_plan": 1})").find("p.json: /scenario: required field is missing") ==
      0);
  CHECK(problems_of(R"({"parasim_plan": 1, "scenario": 3})").find("expected an object") !=
        std::string::npos);
  const std::string bad = problems_of(
      R"({"parasim_plan": 1, "scenario": {"model": "llama2-7b", "cluster": "dgx-h100",
          "training": {"global_bach": 8}, "parallel": {}}})");
  CHECK(bad.find("p.json: /scenario/training/global_bach: unknown key") != std::string::npos);
  CHECK(bad.find("p.json: /scenario/training/global_batch: required field is missing") !=
        std::string::npos);
}

TEST_CASE("a refusal in a plan points into the plan, every problem at once") {
  std::string text = R"({"parasim_plan": 1, "scenario": )" + std::string(kScenario) + "}";
  const auto in = parse_export_input(text, "plan.json");
  const Outcome o = run_export(in, {parasim::exporter::Target::kDeepSpeed, "", "deepspeed"}, false);
  REQUIRE_FALSE(o.result);
  CHECK(o.refusal.find("plan.json: /scenario/parallel/sequence_parallel: Megatron sequence "
                       "parallelism is not expressible in DeepSpeed 0.19.8; supported by: "
                       "megatron, torchtitan") != std::string::npos);
  CHECK(o.refusal.find("plan.json: /scenario/optimizer") == std::string::npos);
}

TEST_CASE("parasim export: --out only on success, exit 2 for a refusal or a bad --version") {
  TempDir dir;
  const fs::path scenario = dir.path() / "s.json";
  write_text(scenario, kScenario);
  parasim::cli::ExportCommandOptions o;
  o.path = scenario.string();
  o.to = "megatron";
  o.out = (dir.path() / "megatron.args").string();
  std::ostringstream out, err;
  CHECK(parasim::cli::run_export(o, out, err) == 0);
  CHECK(out.str().empty());
  const std::string args = read_text(o.out);
  CHECK(args.find("--tensor-model-parallel-size 2\n") != std::string::npos);
  CHECK(err.str().find("parasim export: note: launch on 8 GPUs") != std::string::npos);

  o.to = "deepspeed";
  o.out = (dir.path() / "ds.json").string();
  std::ostringstream out2, err2;
  CHECK(parasim::cli::run_export(o, out2, err2) == 2);
  CHECK_FALSE(fs::exists(o.out));
  CHECK(err2.str().find("/parallel/sequence_parallel") != std::string::npos);

  o.allow_approximate = true;
  std::ostringstream out3, err3;
  CHECK(parasim::cli::run_export(o, out3, err3) == 0);
  // Plain JSON (HF Trainer and Accelerate json.load it): the header is the _parasim key.
  const auto written = nlohmann::json::parse(read_text(o.out));
  CHECK(written.at("_parasim").at("exported_by").get<std::string>().rfind(
            "parasim export of scenario", 0) == 0);
  CHECK_FALSE(written.at("_parasim").at("approximate").empty());
  CHECK(err3.str().find("parasim export: approximate: /parallel/sequence_parallel") !=
        std::string::npos);

  o.to = "torchtitan";
  o.version = "0.4";
  o.out.clear();
  std::ostringstream out4, err4;
  CHECK(parasim::cli::run_export(o, out4, err4) == 2);
  CHECK(err4.str() ==
        "parasim export: --version \"0.4\" is not a version the torchtitan export knows "
        "(versions: 0.3 (torchtitan 0.3.0), 0.2 (torchtitan 0.2.2))\n");
  CHECK(out4.str().empty());
}
