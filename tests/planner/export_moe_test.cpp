// Exports of models with experts (issue 27): Megatron-LM's MoE flags as parsed back, the layer
// pattern of first dense layers, and the trainers that take the model from code refusing.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "export_test_support.hpp"

using namespace parasim::test;
using parasim::exporter::Target;

namespace {

parasim::exporter::ExportInput moe_input(const nlohmann::json& moe,
                                         const nlohmann::json& parallel) {
  nlohmann::json s =
      nlohmann::json::parse(read_text(kSourceDir / "scenarios/mixtral-8x7b-64gpu.json"));
  s["model"]["layers"] = 8;
  s["model"]["moe"] = moe;
  for (const auto& [key, value] : parallel.items()) s["parallel"][key] = value;
  return parasim::exporter::parse_export_input(s.dump(), "moe.json");
}

}  // namespace

TEST_CASE("Megatron-LM export of experts: every MoE flag with the scenario's value") {
  const auto in = moe_input({{"first_dense_layers", 3},
                             {"shared_experts", 1},
                             {"shared_ffn_hidden", 4096},
                             {"router", "sigmoid"},
                             {"load_balancing", "expert_bias"}},
                            {{"etp", 1}, {"moe_dispatcher", "allgather"}, {"pp", 2}, {"dp", 16}});
  const Outcome o = run_export(in, {Target::kMegatron, "", "megatron"}, false);
  REQUIRE_MESSAGE(o.result, o.refusal);
  const auto args = arg_lines(o.result->text);
  CHECK(arg_value(args, "--num-experts") == "8");
  CHECK(arg_value(args, "--moe-router-topk") == "2");
  CHECK(arg_value(args, "--moe-ffn-hidden-size") == "14336");
  CHECK(arg_value(args, "--moe-shared-expert-intermediate-size") == "4096");
  // Megatron's list form: one entry per layer, 0 dense, 1 MoE.
  CHECK(arg_value(args, "--moe-layer-freq") == "([0]*3+[1]*5)");
  CHECK(arg_value(args, "--moe-router-score-function") == "sigmoid");
  CHECK(arg_value(args, "--moe-router-load-balancing-type") == "none");
  CHECK(o.result->text.find("--moe-router-enable-expert-bias") != std::string::npos);
  CHECK(o.result->text.find("--moe-grouped-gemm") != std::string::npos);
  CHECK(arg_value(args, "--expert-model-parallel-size") == "8");
  CHECK(arg_value(args, "--expert-tensor-parallel-size") == "1");
  CHECK(arg_value(args, "--moe-token-dispatcher-type") == "allgather");
  // Every key is one megatron-core 0.19.2 accepts (scripts/export/keys).
  const TargetCase t{Target::kMegatron, "", "megatron"};
  CHECK(unknown_keys(emitted_keys(t, o.result->text), key_list(list_file(t, false))).empty());
}

TEST_CASE("DeepSpeed and torchtitan refuse experts with the reason, Megatron-LM named") {
  const auto in = moe_input(nlohmann::json::object(), nlohmann::json::object());
  for (const TargetCase& t : {TargetCase{Target::kDeepSpeed, "", "deepspeed"},
                              TargetCase{Target::kTorchtitan, "", "torchtitan"}}) {
    CAPTURE(t.tag);
    const Outcome o = run_export(in, t, false);
    REQUIRE_FALSE(o.result);
    CHECK(o.refusal.find("/model/moe: a mixture of experts is not expressible") !=
          std::string::npos);
    CHECK(o.refusal.find("Megatron-LM (--to megatron)") != std::string::npos);
  }
}
