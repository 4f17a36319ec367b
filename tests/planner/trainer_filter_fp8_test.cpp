// `plan --for TRAINER` and FP8 (issue 28): a trainer whose export refuses the scenario's FP8
// recipe does not run it. Megatron-LM refuses torchao's recipes, torchtitan Transformer Engine's
// (and torchao-tensorwise in 0.3.0, the version the filter targets), DeepSpeed every FP8; the
// refusal is outside the searched layout, so `plan --for` stops with it up front.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "export_test_support.hpp"
#include "planner/export/trainer_defaults.hpp"
#include "planner/trainer_filter.hpp"
#include "strategies/input/scenario_parser.hpp"

using namespace parasim::test;
using nlohmann::json;
using parasim::exporter::Target;

namespace {

// Llama 2 7B on 8 H100s with FSDP2 and FlashAttention (a layout all three trainers run in bf16).
json fp8_document(const json& fp8) {
  return {{"model", "llama2-7b"},
          {"cluster", "dgx-h100"},
          {"training",
           {{"global_batch", 64},
            {"micro_batch", 2},
            {"precision", "fp8"},
            {"attention", "flash"},
            {"recompute", "full"},
            {"fp8", fp8}}},
          {"parallel", {{"dp", 8}, {"zero_stage", 3}}},
          {"optimizer", {{"name", "adamw"}}}};
}

// "megatron torchtitan": the trainers that run it, by name.
std::string running(const json& fp8) {
  std::string out;
  for (Target t : parasim::plan::trainers_running(fp8_document(fp8), "fp8.json")) {
    out += (out.empty() ? "" : " ") + std::string(parasim::exporter::target_name(t));
  }
  return out;
}

}  // namespace

TEST_CASE("the trainers that run a scenario's FP8 recipe") {
  CHECK(running({{"recipe", "tensorwise"}}) == "megatron");
  CHECK(running({{"recipe", "blockwise"}}) == "megatron");
  CHECK(running({{"recipe", "torchao-rowwise"}, {"format", "e4m3"}}) == "torchtitan");
  // torchao tensorwise: torchtitan 0.2.2 only, and the filter targets 0.3.0.
  CHECK(running({{"recipe", "torchao-tensorwise"}}) == "");
  // The same layout in bf16 runs on all three (the FP8 recipe is what decides above).
  json bf16 = fp8_document(json::object());
  bf16["training"]["precision"] = "bf16";
  bf16["training"].erase("fp8");
  CHECK(parasim::plan::trainers_running(bf16, "bf16.json").size() == 3);
}

TEST_CASE("an FP8 recipe the trainer refuses is a fixed refusal, not a layout difference") {
  json doc = fp8_document({{"recipe", "delayed"}});
  const auto s = parasim::strat::parse_scenario_document(
      parasim::exporter::with_trainer_defaults(doc, Target::kTorchtitan, nullptr), "fp8.json");
  const auto diffs = parasim::plan::export_differences(s, Target::kTorchtitan);
  bool recipe = false;
  for (const auto& d : diffs) recipe = recipe || d.path == "/training/fp8/recipe";
  CHECK(recipe);
  const auto ds = parasim::plan::export_differences(s, Target::kDeepSpeed);
  bool precision = false;
  for (const auto& d : ds) precision = precision || d.path == "/training/precision";
  CHECK(precision);
}
