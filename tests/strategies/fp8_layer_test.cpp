// FP8 linears in the layer programs and the step (step_writer.hpp's linear(), quantization.hpp):
// the memory they change per layer, exactly, and a step that is never slower than bf16's by more
// than the kernels FP8 adds.
#include <doctest/doctest.h>

#include <array>

#include "costmodel/precision/quantization.hpp"
#include "scenario_builder.hpp"
#include "strategies/framework/host_plan.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;

namespace {

strat::Scenario fp8_of(strat::Scenario sc, cost::QuantRecipe recipe) {
  sc.training.fp8.recipe = recipe;
  return sc;
}

double compute_seconds(const std::vector<strat::LayerStep>& steps) {
  double t = 0;
  for (const auto& s : steps) {
    if (!s.is_collective) t += s.compute.time.to_seconds();
  }
  return t;
}

// The GPU time of the quantisation kernels of a Llama layer's four linears on one rank.
struct ExtraKernels {
  double forward = 0, backward = 0, per_step = 0;
};
ExtraKernels llama_layer_extra(const strat::Scenario& sc, const cost::CostModel& costs) {
  const auto& m = sc.model;
  const double t = sc.parallel.tp, tokens = sc.training.micro_batch * m.seq_len;
  const double qkv = (m.heads + 2.0 * m.kv_heads) * m.head_dim() / t;
  const std::array<std::array<double, 2>, 4> linears{{{qkv, static_cast<double>(m.hidden)},
                                                      {1.0 * m.hidden, m.query_width() / t},
                                                      {2.0 * m.ffn_hidden / t, 1.0 * m.hidden},
                                                      {1.0 * m.hidden, m.ffn_hidden / t}}};
  ExtraKernels e;
  const double gap = strat::queued_kernel_gap(costs.device()).to_seconds();
  auto time = [&](const std::vector<double>& kernels) {
    double s = 0;
    for (double b : kernels) s += costs.memory_bound_body(cost::Bytes{b}).to_seconds() + gap;
    return s;
  };
  for (const auto& nk : linears) {
    const auto k = cost::linear_quant_kernels(sc.training.fp8.recipe,
                                              sc.cluster.device.architecture, tokens, nk[0], nk[1]);
    e.forward += time(k.forward);
    e.backward += time(k.backward);
    e.per_step += time(k.per_step);
  }
  return e;
}

}  // namespace

TEST_CASE(
    "an FP8 layer's memory: inputs saved in FP8, FlashAttention's output beside, weight copies") {
  auto sc = test::small_scenario(1, 1, 1, 1, 1);
  sc.training.attention = strat::AttentionKind::kFlash;
  const cost::CostModel costs(sc.cluster);
  const auto bf16 = strat::transformer_layer_program(sc, costs);
  const auto fp8 = strat::transformer_layer_program(fp8_of(sc, cost::QuantRecipe::kDelayed), costs);
  const double s = sc.model.seq_len, h = sc.model.hidden, f = sc.model.ffn_hidden;
  const double q = sc.model.query_width();
  // qkv input, out-proj input, fc1 input, down input: 2 -> 1 byte; the attention output 2 bytes.
  CHECK(fp8.activation_stored_bytes - bf16.activation_stored_bytes ==
        doctest::Approx(-(s * h + s * q + s * h + s * f) + 2 * s * q).epsilon(1e-12));
  CHECK(fp8.fp8_weights.elements == strat::layer_matrix_params_per_tp_rank(sc.model, 1));
  CHECK(bf16.fp8_weights.elements == 0);
  CHECK(strat::fp8_weight_memory_bytes(fp8_of(sc, cost::QuantRecipe::kDelayed), fp8.fp8_weights) ==
        2.0 * fp8.fp8_weights.elements);  // Hopper: the FP8 weight and its transpose
  // torchao keeps its inputs in bf16 and caches nothing.
  const auto ao =
      strat::transformer_layer_program(fp8_of(sc, cost::QuantRecipe::kTorchaoRowwise), costs);
  CHECK(ao.activation_stored_bytes == bf16.activation_stored_bytes);
  CHECK(strat::fp8_weight_memory_bytes(fp8_of(sc, cost::QuantRecipe::kTorchaoRowwise),
                                       ao.fp8_weights) == 0);
  // FP8 parameters (param_gather): one byte less per linear weight, no copies.
  auto gather = fp8_of(sc, cost::QuantRecipe::kDelayed);
  gather.training.fp8.param_gather = true;
  CHECK(strat::fp8_weight_memory_bytes(gather, fp8.fp8_weights) == -fp8.fp8_weights.elements);
}

TEST_CASE("an FP8 layer is never slower than bf16 by more than its quantisation kernels") {
  for (const char* preset : {"dgx-h100", "dgx-b200"}) {
    auto sc = test::small_scenario(1, 2, 1, 1, 1);
    sc.cluster = cost::find_cluster_preset(preset)->spec;
    sc.training.attention = strat::AttentionKind::kFlash;
    const cost::CostModel costs(sc.cluster);
    const auto bf16 = strat::transformer_layer_program(sc, costs);
    for (cost::QuantRecipe r : cost::kAllQuantRecipes) {
      if (cost::quant_recipe_refusal(r, sc.cluster.device.architecture)) continue;
      CAPTURE(preset);
      CAPTURE(cost::quant_recipe_name(r));
      const auto fsc = fp8_of(sc, r);
      const auto fp8 = strat::transformer_layer_program(fsc, costs);
      const ExtraKernels extra = llama_layer_extra(fsc, costs);
      CHECK(compute_seconds(fp8.forward) <= compute_seconds(bf16.forward) + extra.forward + 1e-12);
      CHECK(compute_seconds(fp8.backward) <=
            compute_seconds(bf16.backward) + extra.backward + 1e-12);
      CHECK(fp8.fp8_weights.time.to_seconds() == doctest::Approx(extra.per_step).epsilon(1e-9));
      // The GEMMs alone are faster: FP8 time without its kernels is below bf16's.
      CHECK(compute_seconds(fp8.forward) - extra.forward < compute_seconds(bf16.forward));
    }
  }
}

TEST_CASE("an FP8 step is never slower than bf16's by more than the kernels FP8 adds") {
  auto sc = test::small_scenario(2, 2, 1, 8, 1);
  sc.training.attention = strat::AttentionKind::kFlash;
  sc.parallel.zero_stage = 1;
  const cost::CostModel costs(sc.cluster);
  const double bf16 = test::simulate_report(sc).step_time_s;
  for (cost::QuantRecipe r : {cost::QuantRecipe::kDelayed, cost::QuantRecipe::kTensorwise,
                              cost::QuantRecipe::kBlockwise, cost::QuantRecipe::kTorchaoRowwise}) {
    CAPTURE(cost::quant_recipe_name(r));
    const auto fsc = fp8_of(sc, r);
    const ExtraKernels e = llama_layer_extra(fsc, costs);
    const int micro_batches = sc.micro_batches();
    const double extra = sc.model.layers * (micro_batches * (e.forward + e.backward) + e.per_step);
    const double fp8 = test::simulate_report(fsc).step_time_s;
    CHECK(fp8 <= bf16 + extra);
  }
}

TEST_CASE("bf16 first and last layers run the bf16 program") {
  auto sc = test::small_scenario(1, 1, 1, 2, 1);
  sc.training.fp8.recipe = cost::QuantRecipe::kTensorwise;
  const double all_fp8 = test::simulate_report(sc).step_time_s;
  sc.training.fp8.bf16_layers_at_start = 1;
  sc.training.fp8.bf16_layers_at_end = 1;
  const double ends_bf16 = test::simulate_report(sc).step_time_s;
  const double bf16 = test::simulate_report(strat::without_fp8(sc)).step_time_s;
  CHECK(all_fp8 < ends_bf16);
  CHECK(ends_bf16 < bf16);
  CHECK_FALSE(sc.training.fp8_layer(0, sc.model.layers));
  CHECK(sc.training.fp8_layer(1, sc.model.layers));
  CHECK_FALSE(sc.training.fp8_layer(sc.model.layers - 1, sc.model.layers));
}
