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
  // Mixtral has no torchtitan model; DeepSpeed takes every MoE from model code.
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

namespace {

// DeepSeek-V3 as torchtitan can run it: bf16 (the shipped scenario's Transformer Engine blockwise
// FP8 is Megatron's), ZeRO 0 (DDP), fp32 gradients, ep within tp x cp.
parasim::exporter::ExportInput deepseek_input(const nlohmann::json& parallel) {
  nlohmann::json s =
      nlohmann::json::parse(read_text(kSourceDir / "scenarios/deepseek-v3-2048gpu.json"));
  s["model"] = {{"preset", "deepseek-v3"}, {"mtp_layers", 0}};  // torchtitan's 671B has no MTP
  s["training"]["grad_precision"] = "fp32";
  s["training"]["precision"] = "bf16";
  s["training"].erase("fp8");
  s["training"]["recompute"] = "full";
  s["parallel"] = {{"dp", 16}, {"tp", 8}, {"pp", 16}, {"ep", 8}, {"etp", 1},
                   {"sequence_parallel", true}, {"zero_stage", 0}, {"schedule", "1f1b"},
                   {"first_stage_layers", 3}, {"last_stage_layers", 2}};
  for (const auto& [key, value] : parallel.items()) s["parallel"][key] = value;
  return parasim::exporter::parse_export_input(s.dump(), "deepseek.json");
}

}  // namespace

TEST_CASE("torchtitan runs DeepSeek-V3 as its own deepseek_v3 model, with expert parallelism") {
  const TargetCase v03{Target::kTorchtitan, "", "torchtitan"};
  const Outcome o = run_export(deepseek_input(nlohmann::json::object()), v03, false);
  REQUIRE_MESSAGE(o.result, o.refusal);
  const auto args = arg_lines(o.result->text);
  CHECK(arg_value(args, "--module") == "deepseek_v3");
  CHECK(arg_value(args, "--config") == "deepseek_v3_671b");
  CHECK(arg_value(args, "--parallelism.expert_parallel_degree") == "8");
  CHECK(unknown_keys(emitted_keys(v03, o.result->text), key_list(list_file(v03, false))).empty());
  // 0.2.2: the flavour, etp and the DeepEP backend by key.
  const TargetCase v02{Target::kTorchtitan, "0.2", "torchtitan-0.2"};
  const Outcome flex = run_export(deepseek_input({{"moe_dispatcher", "flex"}}), v02, false);
  REQUIRE_MESSAGE(flex.result, flex.refusal);
  CHECK(flex.result->text.find("name = \"deepseek_v3\"") != std::string::npos);
  CHECK(flex.result->text.find("flavor = \"671B\"") != std::string::npos);
  CHECK(flex.result->text.find("expert_tensor_parallel_degree = 1") != std::string::npos);
  CHECK(flex.result->text.find("expert_parallel_comm_backend = \"deepep\"") != std::string::npos);
  // 0.3.0 picks DeepEP in its model registry: refused with where it is supported.
  const Outcome no_flex = run_export(deepseek_input({{"moe_dispatcher", "flex"}}), v03, false);
  REQUIRE_FALSE(no_flex.result);
  CHECK(no_flex.refusal.find("/parallel/moe_dispatcher: DeepEP") != std::string::npos);
  // etp = tp with ep > 1: 0.3.0 shards experts over ep only.
  const Outcome etp = run_export(deepseek_input({{"etp", 8}}), v03, false);
  REQUIRE_FALSE(etp.result);
  CHECK(etp.refusal.find("/parallel/etp: etp 8 with ep 8") != std::string::npos);
  // ep beyond what DDP's tp x cp ranks lend it: torchtitan's efsdp would not be whole.
  const Outcome wide = run_export(deepseek_input({{"ep", 16}}), v03, false);
  REQUIRE_FALSE(wide.result);
  CHECK(wide.refusal.find("/parallel/ep: ep 16 over more ranks than FSDP and TP lend it") !=
        std::string::npos);
  // The preset's MTP module: torchtitan's 671B builds none; Megatron-LM's --mtp-num-layers does.
  const Outcome mtp = run_export(deepseek_input(nlohmann::json::object()), v03, false);
  REQUIRE(mtp.result);  // mtp_layers 0 above
  nlohmann::json with_mtp =
      nlohmann::json::parse(read_text(kSourceDir / "scenarios/deepseek-v3-2048gpu.json"));
  const auto in = parasim::exporter::parse_export_input(with_mtp.dump(), "v3.json");
  const Outcome refused = run_export(in, v03, false);
  REQUIRE_FALSE(refused.result);
  CHECK(refused.refusal.find("/model/mtp_layers: 1 multi-token prediction module") !=
        std::string::npos);
  const Outcome megatron = run_export(in, {Target::kMegatron, "", "megatron"}, false);
  REQUIRE_MESSAGE(megatron.result, megatron.refusal);
  CHECK(arg_value(arg_lines(megatron.result->text), "--mtp-num-layers") == "1");
}

TEST_CASE("torchtitan's routers: an auxiliary loss or a capacity factor is refused") {
  nlohmann::json s =
      nlohmann::json::parse(read_text(kSourceDir / "scenarios/qwen3-30b-a3b-8gpu.json"));
  const TargetCase v03{Target::kTorchtitan, "", "torchtitan"};
  const Outcome aux = run_export(parasim::exporter::parse_export_input(s.dump(), "q.json"), v03,
                                 false);
  REQUIRE_FALSE(aux.result);
  CHECK(aux.refusal.find("/model/moe: aux_loss balancing") != std::string::npos);
  // A changed shape is no longer torchtitan's flavour.
  s["model"] = {{"preset", "qwen3-30b-a3b"}, {"layers", 12}};
  const Outcome other = run_export(parasim::exporter::parse_export_input(s.dump(), "q.json"), v03,
                                   false);
  REQUIRE_FALSE(other.result);
  CHECK(other.refusal.find("torchtitan's MoE models as they are") != std::string::npos);
  // DeepSeek-V3 with a capacity factor: torchtitan's experts drop nothing.
  nlohmann::json d =
      nlohmann::json::parse(read_text(kSourceDir / "scenarios/deepseek-v3-2048gpu.json"));
  d["model"] = {{"preset", "deepseek-v3"}, {"mtp_layers", 0}, {"moe", {{"capacity_factor", 1.25}}}};
  const Outcome capped = run_export(parasim::exporter::parse_export_input(d.dump(), "d.json"), v03,
                                    false);
  REQUIRE_FALSE(capped.result);
  CHECK(capped.refusal.find("/model/moe: a capacity factor") != std::string::npos);
}

TEST_CASE("Megatron-LM's flex dispatcher flags: DeepEP's backend, its SMs, fp32 router") {
  const auto in = moe_input(nlohmann::json::object(), {{"moe_dispatcher", "flex"}});
  const Outcome o = run_export(in, {Target::kMegatron, "", "megatron"}, false);
  REQUIRE_MESSAGE(o.result, o.refusal);
  const auto args = arg_lines(o.result->text);
  CHECK(arg_value(args, "--moe-token-dispatcher-type") == "flex");
  CHECK(arg_value(args, "--moe-flex-dispatcher-backend") == "deepep");
  CHECK(arg_value(args, "--moe-flex-dispatcher-num-sms") == "20");
  CHECK(arg_value(args, "--moe-router-dtype") == "fp32");
}
