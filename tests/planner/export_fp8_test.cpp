// FP8 training in the exports (issue 28): Megatron-LM's --fp8-* flags, torchtitan's torchao
// converters (0.2.2 TOML keys, 0.3.0 config-function note, DeepSeek-V3's float8 function), the
// refusals (torchao recipes on Megatron-LM, Transformer Engine recipes on torchtitan, DeepSpeed),
// each emitted key checked against the trainer's list (scripts/export/keys).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "export_test_support.hpp"

using namespace parasim::test;
using nlohmann::json;
using parasim::exporter::FieldUse;
using parasim::exporter::Target;

namespace {

const TargetCase kMegatron{Target::kMegatron, "", "megatron"};
const TargetCase kDeepSpeed{Target::kDeepSpeed, "", "deepspeed"};
const TargetCase kTitan03{Target::kTorchtitan, "", "torchtitan"};
const TargetCase kTitan02{Target::kTorchtitan, "0.2", "torchtitan-0.2"};

// Llama 2 7B on 8 GPUs as Megatron-LM runs it (tp 2, pp 2, ZeRO-1), with `fp8`.
parasim::exporter::ExportInput megatron_input(const json& fp8) {
  json s = json::parse(read_text(kSourceDir / "scenarios/llama2-7b-dgx-h100.json"));
  s["training"]["precision"] = "fp8";
  s["training"]["fp8"] = fp8;
  return parasim::exporter::parse_export_input(s.dump(), "fp8.json");
}

// Llama 2 7B on 8 GPUs as torchtitan runs it: FSDP2, fp32 gradient reduction,
// FlashAttention, full recompute.
parasim::exporter::ExportInput torchtitan_input(const json& fp8, const char* cluster = "dgx-h100") {
  json s = {{"model", "llama2-7b"},
            {"cluster", cluster},
            {"training",
             {{"global_batch", 64},
              {"micro_batch", 2},
              {"precision", "fp8"},
              {"grad_precision", "fp32"},
              {"attention", "flash"},
              {"recompute", "full"},
              {"fp8", fp8}}},
            {"parallel", {{"dp", 8}, {"sharding", "fsdp2"}}},
            {"optimizer", {{"name", "adamw"}}}};
  return parasim::exporter::parse_export_input(s.dump(), "fp8.json");
}

// The argument lines that name FP8 or bf16.
std::vector<std::string> fp8_lines(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& [flag, value] : arg_lines(text)) {
    if (flag.find("fp8") != std::string::npos || flag.find("bf16") != std::string::npos) {
      out.push_back(value.empty() ? flag : flag + " " + value);
    }
  }
  return out;
}

void keys_known(const TargetCase& t, const std::string& text) {
  const auto unknown = unknown_keys(emitted_keys(t, text), key_list(list_file(t, false)));
  for (const std::string& k : unknown) CHECK_MESSAGE(false, "unknown key " << k);
}

const parasim::exporter::FieldRecord* record(const parasim::exporter::ExportResult& r,
                                             const std::string& path) {
  for (const auto& f : r.ledger) {
    if (f.path == path) return &f;
  }
  return nullptr;
}

bool has_note(const parasim::exporter::ExportResult& r, const std::string& part) {
  for (const std::string& n : r.notes) {
    if (n.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("Megatron-LM: --bf16 kept, the recipe, format, FP8 all-gather and bf16 layers") {
  const auto in = megatron_input({{"recipe", "tensorwise"},
                                  {"param_gather", true},
                                  {"bf16_layers_at_start", 1},
                                  {"bf16_layers_at_end", 2}});
  const Outcome o = run_export(in, kMegatron, false);
  REQUIRE_MESSAGE(o.result, o.refusal);
  CHECK(fp8_lines(o.result->text) ==
        std::vector<std::string>{"--bf16", "--fp8-format hybrid", "--fp8-recipe tensorwise",
                                 "--fp8-param-gather", "--first-last-layers-bf16",
                                 "--num-layers-at-start-in-bf16 1",
                                 "--num-layers-at-end-in-bf16 2", "--grad-reduce-in-bf16"});
  keys_known(kMegatron, o.result->text);
  const auto* p = record(*o.result, "/training/precision");
  REQUIRE(p);
  CHECK(p->detail.find("--bf16") != std::string::npos);
}

TEST_CASE("Megatron-LM: delayed scaling writes Transformer Engine's amax defaults, said so") {
  const auto in = megatron_input({{"recipe", "delayed"}, {"format", "e4m3"}});
  const Outcome o = run_export(in, kMegatron, false);
  REQUIRE_MESSAGE(o.result, o.refusal);
  CHECK(fp8_lines(o.result->text) ==
        std::vector<std::string>{"--bf16", "--fp8-format e4m3", "--fp8-recipe delayed",
                                 "--fp8-amax-history-len 1024", "--fp8-amax-compute-algo max",
                                 "--grad-reduce-in-bf16"});
  keys_known(kMegatron, o.result->text);
  const auto* r = record(*o.result, "/training/fp8/recipe");
  REQUIRE(r);
  CHECK(r->detail.find("DelayedScaling defaults") != std::string::npos);
  CHECK(r->detail.find("do not change parasim's cost") != std::string::npos);
}

TEST_CASE("Megatron-LM refuses torchao's recipes, naming torchtitan") {
  for (const char* recipe : {"torchao-rowwise", "torchao-tensorwise"}) {
    CAPTURE(recipe);
    const auto in = megatron_input(
        {{"recipe", recipe}, {"format", std::string(recipe) == "torchao-rowwise" ? "e4m3" : "hybrid"}});
    const Outcome o = run_export(in, kMegatron, false);
    REQUIRE_FALSE(o.result);
    CHECK(o.refusal.find("/training/fp8/recipe: torchao's float8 recipe") != std::string::npos);
    CHECK(o.refusal.find("supported by: torchtitan") != std::string::npos);
    // Approximated: Transformer Engine's current scaling.
    const Outcome a = run_export(in, kMegatron, true);
    REQUIRE(a.result);
    CHECK(arg_value(arg_lines(a.result->text), "--fp8-recipe") == "tensorwise");
  }
}

TEST_CASE("DeepSpeed refuses FP8: Transformer Engine lives in model code") {
  const auto in = megatron_input({{"recipe", "tensorwise"}});
  const Outcome o = run_export(in, kDeepSpeed, false);
  REQUIRE_FALSE(o.result);
  CHECK(o.refusal.find("/training/precision: FP8 training (tensorwise recipe; DeepSpeed") !=
        std::string::npos);
  CHECK(o.refusal.find("supported by: megatron (--fp8-recipe tensorwise)") != std::string::npos);
  const Outcome a = run_export(in, kDeepSpeed, true);
  REQUIRE(a.result);
  const json j = json::parse(without_comments(a.result->text));
  CHECK(j["bf16"] == json{{"enabled", true}});
  for (const auto& [key, value] : j.items()) {
    if (key != "_parasim") CHECK(value.dump().find("fp8") == std::string::npos);
  }
  keys_known(kDeepSpeed, a.result->text);
}

TEST_CASE("torchtitan 0.2.2: the float8 converter's TOML keys, rowwise, head and bf16 layers") {
  const auto in = torchtitan_input({{"recipe", "torchao-rowwise"},
                                    {"format", "e4m3"},
                                    {"bf16_layers_at_start", 1},
                                    {"bf16_layers_at_end", 1}});
  const Outcome o = run_export(in, kTitan02, false, true);
  REQUIRE_MESSAGE(o.result, o.refusal);
  const json j = json::parse(o.result->text);
  CHECK(j["model"]["converters"] == json::array({"quantize.linear.float8"}));
  CHECK(j["quantize"]["linear"]["float8"] ==
        json{{"recipe_name", "rowwise"}, {"filter_fqns", {"output", "layers.0.", "layers.31."}}});
  CHECK(j["training"]["mixed_precision_param"] == "bfloat16");
  keys_known(kTitan02, o.result->text);
  // The TOML form: a nested table.
  const Outcome toml = run_export(in, kTitan02, false);
  REQUIRE(toml.result);
  CHECK(toml.result->text.find("[quantize.linear.float8]\nrecipe_name = \"rowwise\"\n"
                               "filter_fqns = [\"output\",\"layers.0.\",\"layers.31.\"]\n") !=
        std::string::npos);
}

TEST_CASE("torchtitan 0.2.2: torchao tensorwise with FSDP's float8 all-gather") {
  const auto in = torchtitan_input({{"recipe", "torchao-tensorwise"}, {"param_gather", true}});
  const Outcome o = run_export(in, kTitan02, false, true);
  REQUIRE_MESSAGE(o.result, o.refusal);
  const json j = json::parse(o.result->text);
  CHECK(j["quantize"]["linear"]["float8"] ==
        json{{"filter_fqns", {"output"}},
             {"enable_fsdp_float8_all_gather", true},
             {"precompute_float8_dynamic_scale_for_fsdp", true}});
  keys_known(kTitan02, o.result->text);
}

TEST_CASE("torchtitan 0.3.0: the converter is stated for the config function; no flag") {
  const auto in = torchtitan_input(
      {{"recipe", "torchao-rowwise"}, {"format", "e4m3"}, {"bf16_layers_at_end", 2}});
  const Outcome o = run_export(in, kTitan03, false);
  REQUIRE_MESSAGE(o.result, o.refusal);
  CHECK(o.result->text.find("fp8") == std::string::npos);
  CHECK(o.result->text.find("float8") == std::string::npos);
  keys_known(kTitan03, o.result->text);
  CHECK(has_note(*o.result,
                 "converters=[Float8LinearConverter.Config(recipe_name=\"rowwise\", "
                 "filter_fqns=[\"lm_head\", \"layers.30.\", \"layers.31.\"])]"));
  const auto* r = record(*o.result, "/training/fp8/recipe");
  REQUIRE(r);
  CHECK(r->use == FieldUse::kStated);
}

TEST_CASE("torchtitan refuses Transformer Engine's recipes, and tensorwise in 0.3.0") {
  for (const char* recipe : {"delayed", "tensorwise", "blockwise"}) {
    for (const TargetCase& t : {kTitan03, kTitan02}) {
      CAPTURE(recipe);
      CAPTURE(t.tag);
      const Outcome o = run_export(torchtitan_input({{"recipe", recipe}}), t, false);
      REQUIRE_FALSE(o.result);
      CHECK(o.refusal.find(std::string("/training/fp8/recipe: Transformer Engine's ") + recipe) !=
            std::string::npos);
      CHECK(o.refusal.find("supported by: megatron") != std::string::npos);
    }
  }
  const Outcome o = run_export(torchtitan_input({{"recipe", "torchao-tensorwise"}}), kTitan03, false);
  REQUIRE_FALSE(o.result);
  CHECK(o.refusal.find("torchao's tensorwise float8 recipe (torchtitan 0.3.0's") !=
        std::string::npos);
  CHECK(o.refusal.find("supported by: torchtitan 0.2") != std::string::npos);
}

TEST_CASE("torchtitan: mxfp8 is torchao's MX, e4m3 only, on Blackwell") {
  const auto in = torchtitan_input({{"recipe", "mxfp8"}, {"format", "e4m3"}}, "dgx-b200");
  const Outcome o2 = run_export(in, kTitan02, false, true);
  REQUIRE_MESSAGE(o2.result, o2.refusal);
  const json j = json::parse(o2.result->text);
  CHECK(j["model"]["converters"] == json::array({"quantize.linear.mx"}));
  CHECK(j["quantize"]["linear"]["mx"] == json{{"filter_fqns", {"output"}}});
  keys_known(kTitan02, o2.result->text);
  const Outcome o3 = run_export(in, kTitan03, false);
  REQUIRE_MESSAGE(o3.result, o3.refusal);
  CHECK(has_note(*o3.result, "converters=[MXFP8LinearConverter.Config(fqns=[\"layers.\"])]"));
  CHECK(has_note(*o3.result, "torchao's MX"));
  const Outcome hybrid =
      run_export(torchtitan_input({{"recipe", "mxfp8"}}, "dgx-b200"), kTitan02, false);
  REQUIRE_FALSE(hybrid.result);
  CHECK(hybrid.refusal.find("/training/fp8/format: hybrid FP8 with mxfp8") != std::string::npos);
}

namespace {

// DeepSeek-V3 as torchtitan runs it (export_moe_test.cpp's layout, one stage).
parasim::exporter::ExportInput deepseek_fp8(const json& fp8, int pp) {
  json s = json::parse(read_text(kSourceDir / "scenarios/deepseek-v3-2048gpu.json"));
  s["model"] = {{"preset", "deepseek-v3"}, {"mtp_layers", 0}};
  s["training"]["grad_precision"] = "fp32";
  s["training"]["recompute"] = "full";
  s["training"]["precision"] = "fp8";
  s["training"]["fp8"] = fp8;
  s["parallel"] = {{"dp", 256 / pp}, {"tp", 8}, {"pp", pp}, {"ep", 8}, {"etp", 1},
                   {"sequence_parallel", true}, {"zero_stage", 0}, {"schedule", "1f1b"}};
  if (pp == 2) s["parallel"]["first_stage_layers"] = 31;
  return parasim::exporter::parse_export_input(s.dump(), "deepseek-fp8.json");
}

}  // namespace

TEST_CASE("torchtitan MoE: DeepSeek-V3's float8 function (0.3.0), grouped float8 experts (0.2.2)") {
  const json rowwise = {{"recipe", "torchao-rowwise"}, {"format", "e4m3"}};
  const Outcome o3 = run_export(deepseek_fp8(rowwise, 1), kTitan03, false);
  REQUIRE_MESSAGE(o3.result, o3.refusal);
  CHECK(arg_value(arg_lines(o3.result->text), "--config") == "deepseek_v3_671b_float8");
  keys_known(kTitan03, o3.result->text);

  const Outcome o2 = run_export(deepseek_fp8(rowwise, 1), kTitan02, false, true);
  REQUIRE_MESSAGE(o2.result, o2.refusal);
  const json j = json::parse(o2.result->text);
  CHECK(j["model"]["converters"] ==
        json::array({"quantize.linear.float8", "quantize.grouped_mm.float8"}));
  CHECK(j["quantize"]["linear"]["float8"]["filter_fqns"] == json::array({"output", "router.gate"}));
  CHECK(j["quantize"]["grouped_mm"]["float8"] == json{{"fqns", {"moe.experts"}}});
  keys_known(kTitan02, o2.result->text);

  // 0.2.2's float8 experts assert a single stage.
  const Outcome staged = run_export(deepseek_fp8(rowwise, 2), kTitan02, false);
  REQUIRE_FALSE(staged.result);
  CHECK(staged.refusal.find("float8 experts with pipeline or context parallelism") !=
        std::string::npos);
}

TEST_CASE("the FP8 ledger: every /training/fp8 field accounted for on every target") {
  const auto in = megatron_input({{"recipe", "blockwise"}, {"bf16_layers_at_start", 1}});
  for (const TargetCase& t : {kMegatron, kDeepSpeed, kTitan03, kTitan02,
                              TargetCase{Target::kShampoo, "", "shampoo"}}) {
    CAPTURE(t.tag);
    const Outcome o = run_export(in, t, true);
    REQUIRE(o.result);
    for (const char* leaf : {"/training/precision", "/training/fp8/recipe", "/training/fp8/format",
                             "/training/fp8/param_gather", "/training/fp8/bf16_layers_at_start",
                             "/training/fp8/bf16_layers_at_end"}) {
      bool found = false;
      for (const auto& r : o.result->ledger) {
        found = found || std::string(leaf) == r.path ||
                std::string(leaf).rfind(r.path + "/", 0) == 0;
      }
      CHECK_MESSAGE(found, leaf);
    }
  }
}
