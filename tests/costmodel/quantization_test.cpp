// FP8 recipes (costmodel/precision/quantization.hpp): each recipe's kernels per linear, exactly,
// the bytes it saves and caches, and where it runs.
#include "costmodel/precision/quantization.hpp"

#include <doctest/doctest.h>

#include <numeric>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/compute_cost.hpp"
#include "costmodel/cost_model.hpp"

using namespace parasim::cost;

namespace {

double sum(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0);
}

}  // namespace

TEST_CASE(
    "per-tensor TE recipes: one fused cast (+ transpose on Hopper); current scaling reads twice") {
  const double m = 4096, n = 1024, k = 2048;  // tokens, out, in
  const double x = m * k, w = n * k, g = m * n;
  const auto hd = linear_quant_kernels(QuantRecipe::kDelayed, Architecture::kHopper, m, n, k);
  CHECK(hd.forward == std::vector<double>{2 * x + 2 * x});  // read bf16, FP8 and its transpose
  CHECK(hd.backward == std::vector<double>{2 * g + 2 * g});
  CHECK(hd.per_step == std::vector<double>{2 * w + 2 * w});
  const auto bd = linear_quant_kernels(QuantRecipe::kDelayed, Architecture::kBlackwell, m, n, k);
  CHECK(bd.forward == std::vector<double>{2 * x + x});  // any-layout GEMMs: no transpose
  CHECK(bd.per_step == std::vector<double>{2 * w + w});
  const auto ht = linear_quant_kernels(QuantRecipe::kTensorwise, Architecture::kHopper, m, n, k);
  CHECK(ht.forward == std::vector<double>{2 * x, 2 * x + 2 * x});  // amax pass, then the cast
  CHECK(ht.backward == std::vector<double>{2 * g, 2 * g + 2 * g});
  CHECK(ht.per_step == std::vector<double>{2 * w, 2 * w + 2 * w});
}

TEST_CASE("block-scaled recipes quantise both copies from bf16, with their scales") {
  const double m = 512, n = 256, k = 384;
  const double x = m * k;
  const auto mx = linear_quant_kernels(QuantRecipe::kMxfp8, Architecture::kBlackwell, m, n, k);
  REQUIRE(mx.forward.size() == 1);
  CHECK(mx.forward[0] == doctest::Approx(2 * x + 2 * x * (1 + 1.0 / 32)).epsilon(1e-15));
  const auto bw = linear_quant_kernels(QuantRecipe::kBlockwise, Architecture::kHopper, m, n, k);
  CHECK(bw.forward[0] == doctest::Approx(2 * x + 2 * x * (1 + 4.0 / 128)).epsilon(1e-15));
  // The same on Blackwell: a 1x128 copy cannot be transposed anywhere.
  CHECK(linear_quant_kernels(QuantRecipe::kBlockwise, Architecture::kBlackwell, m, n, k).forward ==
        bw.forward);
}

TEST_CASE("torchao recipes recast the weight every micro-batch and cache nothing") {
  const double m = 2048, n = 512, k = 1024;
  const double x = m * k, w = n * k, g = m * n;
  const auto tw =
      linear_quant_kernels(QuantRecipe::kTorchaoTensorwise, Architecture::kHopper, m, n, k);
  // Input: amax, its second stage, one dual cast; the weight's amax, second stage, forward cast.
  CHECK(tw.forward == std::vector<double>{2 * x, 0, 4 * x, 2 * w, 0, 3 * w});
  CHECK(tw.backward == std::vector<double>{2 * g, 0, 4 * g, 3 * w});
  CHECK(tw.per_step.empty());
  const auto rw =
      linear_quant_kernels(QuantRecipe::kTorchaoRowwise, Architecture::kHopper, m, n, k);
  CHECK(rw.forward == std::vector<double>{5 * x, 3 * x, 3 * w});
  CHECK(rw.backward == std::vector<double>{5 * g, 3 * g, 4 * w, 3 * w});
  CHECK(cached_weight_bytes_per_element(QuantRecipe::kTorchaoRowwise, Architecture::kHopper) == 0);
  CHECK(saved_linear_input_bytes(QuantRecipe::kTorchaoRowwise) == 2);
}

TEST_CASE("a grouped GEMM's operands: every group's rows, quantised by one kernel") {
  const auto one = linear_quant_kernels(QuantRecipe::kDelayed, Architecture::kHopper, 100, 64, 32);
  const auto eight =
      linear_quant_kernels(QuantRecipe::kDelayed, Architecture::kHopper, 100, 64, 32, 8);
  REQUIRE(eight.forward.size() == 1);
  CHECK(eight.forward[0] == 8 * one.forward[0]);
  CHECK(eight.backward[0] == 8 * one.backward[0]);
  CHECK(eight.per_step[0] == 8 * one.per_step[0]);
}

TEST_CASE("saved inputs and cached weights per element") {
  CHECK(saved_linear_input_bytes(QuantRecipe::kNone) == 2);
  CHECK(saved_linear_input_bytes(QuantRecipe::kDelayed) == 1);
  CHECK(saved_linear_input_bytes(QuantRecipe::kMxfp8) == 1 + 1.0 / 32);
  CHECK(saved_linear_input_bytes(QuantRecipe::kBlockwise) == 1 + 4.0 / 128);
  CHECK(cached_weight_bytes_per_element(QuantRecipe::kDelayed, Architecture::kHopper) == 2);
  CHECK(cached_weight_bytes_per_element(QuantRecipe::kDelayed, Architecture::kBlackwell) == 1);
  CHECK(cached_weight_bytes_per_element(QuantRecipe::kMxfp8, Architecture::kBlackwell) ==
        2 * (1 + 1.0 / 32));
  CHECK(cached_weight_bytes_per_element(QuantRecipe::kNone, Architecture::kHopper) == 0);
}

TEST_CASE("where recipes run, and their GEMM rates") {
  CHECK(quant_recipe_refusal(QuantRecipe::kDelayed, Architecture::kAmpere).has_value());
  CHECK(quant_recipe_refusal(QuantRecipe::kMxfp8, Architecture::kHopper).has_value());
  CHECK_FALSE(quant_recipe_refusal(QuantRecipe::kMxfp8, Architecture::kBlackwell).has_value());
  CHECK_FALSE(quant_recipe_refusal(QuantRecipe::kMxfp8, Architecture::kCdna4).has_value());
  CHECK(quant_recipe_refusal(QuantRecipe::kBlockwise, Architecture::kCdna3).has_value());
  CHECK(quant_recipe_refusal(QuantRecipe::kBlockwise, Architecture::kUnknown).has_value());
  CHECK_FALSE(quant_recipe_refusal(QuantRecipe::kTensorwise, Architecture::kUnknown).has_value());
  CHECK(quant_gemm_rate(QuantRecipe::kDelayed, Architecture::kHopper) == 1);
  CHECK(quant_gemm_rate(QuantRecipe::kMxfp8, Architecture::kBlackwell) ==
        doctest::Approx(6.812 / 7.161).epsilon(1e-15));
  CHECK(quant_gemm_rate(QuantRecipe::kBlockwise, Architecture::kBlackwell) ==
        quant_gemm_rate(QuantRecipe::kMxfp8, Architecture::kBlackwell));
  for (QuantRecipe r : kAllQuantRecipes) {
    CHECK(parse_quant_recipe(quant_recipe_name(r)) == r);
  }
}

TEST_CASE("an FP8 GEMM runs at the FP8 peak: twice bf16's on H100 before efficiency") {
  ClusterSpec c = find_cluster_preset("dgx-h100")->spec;
  // The datasheet's 1978.9 against 989.4 TFLOP/s (each rounded to 0.1).
  CHECK(c.device.peak_fp8.flop_per_s ==
        doctest::Approx(2 * c.device.peak_bf16.flop_per_s).epsilon(1e-4));
  c.device.kernels.gemm_ceiling_fp8 = c.device.kernels.gemm_ceiling_bf16;  // same efficiency
  const CostModel costs(c);
  const GemmShape bf16{8192, 8192, 8192, 1, Dtype::kBf16};
  GemmShape fp8 = bf16;
  fp8.dtype = Dtype::kFp8;
  CHECK(
      costs.gemm_body(bf16).to_seconds() / costs.gemm_body(fp8).to_seconds() ==
      doctest::Approx(c.device.peak_fp8.flop_per_s / c.device.peak_bf16.flop_per_s).epsilon(1e-6));
}
