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

// Llama 2 7B on 8 H100s with parameters sharded (ZeRO-3, which Megatron-LM and DeepSpeed run,
// or FSDP2, which torchtitan runs) and FlashAttention.
json fp8_document(const json& fp8, const char* sharding = "zero-3") {
  return {{"model", "llama2-7b"},
          {"cluster", "dgx-h100"},
          {"training",
           {{"global_batch", 64},
            {"micro_batch", 2},
            {"precision", "fp8"},
            {"attention", "flash"},
            {"recompute", "full"},
            {"fp8", fp8}}},
          {"parallel", {{"dp", 8}, {"sharding", sharding}}},
          {"optimizer", {{"name", "adamw"}}}};
}

// "megatron torchtitan": the trainers that run it, by name.
std::string running(const json& fp8, const char* sharding = "zero-3") {
  std::string out;
  for (Target t : parasim::plan::trainers_running(fp8_document(fp8, sharding), "fp8.json")) {
    out += (out.empty() ? "" : " ") + std::string(parasim::exporter::target_name(t));
  }
  return out;
}

}  // namespace

TEST_CASE("the trainers that run a scenario's FP8 recipe") {
  CHECK(running({{"recipe", "tensorwise"}}) == "megatron");
  CHECK(running({{"recipe", "blockwise"}}) == "megatron");
  CHECK(running({{"recipe", "torchao-rowwise"}, {"format", "e4m3"}}, "fsdp2") == "torchtitan");
  CHECK(running({{"recipe", "torchao-rowwise"}, {"format", "e4m3"}}) == "");
  // torchao tensorwise: torchtitan 0.2.2 only, and the filter targets 0.3.0.
  CHECK(running({{"recipe", "torchao-tensorwise"}}, "fsdp2") == "");
  // The same layouts in bf16 run on the trainers that shard that way (the FP8 recipe is what
  // decides above).
  for (const char* sharding : {"zero-3", "fsdp2"}) {
    json bf16 = fp8_document(json::object(), sharding);
    bf16["training"]["precision"] = "bf16";
    bf16["training"].erase("fp8");
    CHECK(parasim::plan::trainers_running(bf16, "bf16.json").size() ==
          (std::string(sharding) == "fsdp2" ? 1u : 2u));
  }
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
