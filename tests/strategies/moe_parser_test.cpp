// model.moe, model.mla and the other model keys of the mixture-of-experts presets, as the
// scenario parser reads them: every problem with its JSON path, at once.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/diagnostics.hpp"
#include "parser_problems.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::strat {
namespace {

std::vector<cost::Problem> problems_of(const std::string& model) {
  const std::string text = R"({"model": )" + model +
                           R"(, "cluster": "dgx-h100", "training": {"global_batch": 8,
      "micro_batch": 1}, "parallel": {"dp": 8}})";
  return test::problems_of(text, "moe.json");
}
using test::has_problem;

}  // namespace

TEST_CASE("model.moe: every problem of the section at once, with its path") {
  const auto p = problems_of(R"({"preset": "llama2-7b", "moe": {"experts": 4, "top_k": 6,
      "expert_ffn_hidden": 1024, "router": "softmax", "load_balancing": "expert_bias",
      "capacity_factor": 0.5, "first_dense_layers": 32, "routers": 1}})");
  CHECK(has_problem(p, "/model/moe/top_k", "top_k (6) must not exceed the experts (4)"));
  CHECK(has_problem(p, "/model/moe/load_balancing", "set \"router\": \"sigmoid\""));
  CHECK(has_problem(p, "/model/moe/capacity_factor", "expected 0 (dropless) or a factor"));
  CHECK(has_problem(p, "/model/moe/first_dense_layers", "leaves none of the 32 layers"));
  CHECK(has_problem(p, "/model/moe/routers", "did you mean"));
}

TEST_CASE("model.moe without a preset needs its three sizes") {
  const auto p = problems_of(R"({"preset": "llama2-7b", "moe": {"shared_experts": 1}})");
  CHECK(has_problem(p, "/model/moe/experts", "required"));
  CHECK(has_problem(p, "/model/moe/top_k", "required"));
  CHECK(has_problem(p, "/model/moe/expert_ffn_hidden", "required"));
}

TEST_CASE("experts beside low-rank linears are refused") {
  const auto p = problems_of(R"({"preset": "llama2-7b", "low_rank": {"rank": 64},
      "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 1024}})");
  CHECK(has_problem(p, "/model/moe", "give one of \"moe\" and \"low_rank\""));
}

TEST_CASE("what the builder does not price yet is refused, never simulated as something else") {
  // Multi-token prediction is priced (mtp_module.hpp): a preset with it, or a depth given.
  for (const char* model : {R"("deepseek-v3")", R"({"preset": "llama2-7b", "mtp_layers": 1})"}) {
    CAPTURE(model);
    CHECK_NOTHROW(parse_scenario(std::string(R"({"model": )") + model +
                                     R"(, "cluster": "dgx-h100", "training": {"global_batch": 8,
                                     "micro_batch": 1}, "parallel": {"dp": 8}})",
                                 "mtp.json"));
  }
  CHECK(has_problem(problems_of(R"({"preset": "llama2-7b", "mtp_layers": 17})"),
                    "/model/mtp_layers", "16"));
  // Latent attention is built for the megatron placement without context parallelism.
  const std::string mla_cp = R"({"model": {"preset": "llama2-7b", "mla": {"kv_lora_rank": 512,
      "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}},
      "cluster": "dgx-h100", "training": {"global_batch": 8, "micro_batch": 1,
      "attention": "flash"}, "parallel": {"dp": 4, "cp": 2}})";
  try {
    parse_scenario(mla_cp, "mla.json");
    FAIL("expected cost::InputError");
  } catch (const cost::InputError& e) {
    CHECK(has_problem(e.diagnostics().problems(), "/parallel/cp",
                      "multi-head latent attention is not modelled with context parallelism"));
  }
  // A head width that equals hidden / heads changes nothing and is accepted.
  const std::string same = R"({"model": {"preset": "llama2-7b", "head_dim": 128},
      "cluster": "dgx-h100", "training": {"global_batch": 8, "micro_batch": 1},
      "parallel": {"dp": 8}})";
  CHECK(parse_scenario(same, "same.json").model.head_dim() == 128);
}

}  // namespace parasim::strat

namespace parasim::strat {

TEST_CASE("cluster.gpus_per_host must divide the node's GPUs") {
  const std::string bad = R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100",
      "gpus_per_host": 3}, "training": {"global_batch": 8}, "parallel": {"dp": 8}})";
  try {
    parse_scenario(bad, "hosts.json");
    FAIL("expected cost::InputError");
  } catch (const cost::InputError& e) {
    bool named = false;
    for (const auto& p : e.diagnostics().problems()) {
      named = named || (p.json_path == "/cluster/gpus_per_host" &&
                        p.message.find("must divide gpus_per_node (8)") != std::string::npos);
    }
    CHECK(named);
  }
  const auto ok = parse_scenario(R"({"model": "llama3-8b", "cluster": {"preset": "dgx-h100",
      "gpus_per_host": 4}, "training": {"global_batch": 8}, "parallel": {"dp": 8}})",
                                 "hosts.json");
  CHECK(ok.cluster.hosts() == 2);
}

}  // namespace parasim::strat
