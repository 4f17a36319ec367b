// cluster.device.kernel_efficiency: overrides of the device's measured kernel efficiencies.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/diagnostics.hpp"
#include "strategies/input/scenario_parser.hpp"

using namespace parasim;

namespace {

std::string scenario_with_device(const std::string& device) {
  return R"({"model": {"preset": "gpt2-medium"},
             "cluster": {"preset": "dgx-a100-80gb", "gpus_per_node": 1, "device": )" +
         device + R"(}, "training": {"global_batch": 8}, "parallel": {}})";
}

}  // namespace

TEST_CASE("kernel_efficiency overrides named fields and keeps the preset's others") {
  const auto sc = strat::parse_scenario(scenario_with_device(R"({"kernel_efficiency": {
      "gemm_ceiling": {"bf16": 0.7}, "gemm_k_half": 128, "min_gemm_body": "3 us",
      "memory_efficiency": 0.9,
      "flash_attention": {"head_dims": [64, 128], "seq_lens": [1024],
                          "forward": [[0.5], [0.6]], "backward": [[0.4], [0.45]]}}})"),
                                        "k.json");
  const auto& k = sc.cluster.device.kernels;
  const auto& preset = cost::find_cluster_preset("dgx-a100-80gb")->spec.device.kernels;
  CHECK(k.gemm_ceiling_bf16 == 0.7);
  CHECK(k.gemm_ceiling_fp16 == preset.gemm_ceiling_fp16);
  CHECK(k.gemm_k_half == 128);
  CHECK(k.min_gemm_body == sim::Time::us(3));
  CHECK(k.memory_streaming == 0.9);
  CHECK(k.flash.efficiency(cost::FlashPass::kForward, 128, 4096) == 0.6);
  CHECK(k.flash.efficiency(cost::FlashPass::kBackward, 64, 512) == 0.4);
  CHECK(k.calibrated);
  CHECK_NOTHROW(cost::validate(k));
}

TEST_CASE("kernel_efficiency reports every problem with its path") {
  try {
    strat::parse_scenario(scenario_with_device(R"({"kernel_efficiency": {
        "gemm_ceiling": {"bf16": 1.5, "fp4": 0.5}, "memory_eficiency": 0.8,
        "flash_attention": {"head_dims": [128, 64], "seq_lens": [1024, 2048],
                            "forward": [[0.5, 0.6]], "backward": [[0.5]]}}})"),
                          "k.json");
    FAIL("expected cost::InputError");
  } catch (const cost::InputError& e) {
    const auto& problems = e.diagnostics().problems();
    auto has = [&](const std::string& path, const std::string& text) {
      return std::any_of(problems.begin(), problems.end(), [&](const cost::Problem& p) {
        return p.json_path == path && p.message.find(text) != std::string::npos;
      });
    };
    const std::string k = "/cluster/device/kernel_efficiency";
    CHECK(has(k + "/gemm_ceiling/bf16", "expected a number in [0.001, 1]"));
    CHECK(has(k + "/gemm_ceiling/fp4", "unknown key"));
    CHECK(has(k + "/memory_eficiency", "did you mean \"memory_efficiency\""));
    CHECK(has(k + "/flash_attention/head_dims", "strictly increasing"));
    CHECK(problems.size() == 4);
  }
  try {
    strat::parse_scenario(scenario_with_device(R"({"kernel_efficiency": {
        "flash_attention": {"head_dims": [128], "seq_lens": [1024, 2048],
                            "forward": [[0.5, 0.6], [0.5, 0.6]], "backward": [[0.5]]}}})"),
                          "k.json");
    FAIL("expected cost::InputError");
  } catch (const cost::InputError& e) {
    const auto& problems = e.diagnostics().problems();
    REQUIRE(problems.size() == 2);
    CHECK(problems[0].json_path == "/cluster/device/kernel_efficiency/flash_attention/forward");
    CHECK(problems[0].message.find("1 rows (one per head dimension), got 2 rows") !=
          std::string::npos);
    CHECK(problems[1].json_path == "/cluster/device/kernel_efficiency/flash_attention/backward/0");
    CHECK(problems[1].message.find("expected 2 values") != std::string::npos);
  }
}
