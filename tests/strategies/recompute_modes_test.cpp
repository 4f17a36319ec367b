// The recompute modes' layer programs: the kernels a backward reruns and what a forward keeps
// (strategies/layers/recompute_steps.hpp, costmodel/activation_checkpointing.hpp).
#include <doctest/doctest.h>

#include <string>

#include "costmodel/activation_checkpointing.hpp"
#include "costmodel/cost_model.hpp"
#include "costmodel/diagnostics.hpp"
#include "costmodel/precision/quantization.hpp"
#include "scenario_builder.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/registry/scenario_rules.hpp"

using namespace parasim;

namespace {

double flops(const std::vector<strat::LayerStep>& steps) {
  double f = 0;
  for (const auto& s : steps) {
    if (!s.is_collective) f += s.compute.flops.value;
  }
  return f;
}

int recompute_collectives(const std::vector<strat::LayerStep>& steps, cost::CollectiveKind kind) {
  int n = 0;
  for (const auto& s : steps) n += s.recompute && s.is_collective && s.collective.kind == kind;
  return n;
}

strat::Scenario llama(int tp, bool sp) {
  auto sc = test::small_scenario(1, tp, 1, 1, 1, 8);
  sc.parallel.sequence_parallel = sp;
  sc.training.attention = strat::AttentionKind::kFlash;
  return sc;
}

}  // namespace

TEST_CASE("per-op AC reruns wk, wo and w3 and the all-gathers, keeps torchtitan's saved set") {
  for (const int tp : {1, 2}) {
    CAPTURE(tp);
    auto sc = llama(tp, tp > 1);
    const cost::CostModel costs(sc.cluster);
    const auto none = strat::transformer_layer_program(sc, costs);
    sc.training.recompute = cost::Recompute::kPerOp;
    const auto op = strat::transformer_layer_program(sc, costs);
    const auto& m = sc.model;
    const double tokens = m.seq_len, h = m.hidden, t = tp;
    const double d = m.head_dim(), f = m.ffn_hidden;
    // GEMM FLOPs 2 m n k of wk [tokens x kv d / t], wo [tokens x h, k = a d / t], w3.
    const double rerun = 2 * tokens * (m.kv_heads * d / t) * h +
                         2 * tokens * h * (m.heads * d / t) + 2 * tokens * (f / t) * h;
    CHECK(flops(op.backward) - flops(none.backward) == doctest::Approx(rerun).epsilon(1e-9));
    CHECK(flops(op.backward_input) - flops(none.backward_input) ==
          doctest::Approx(rerun).epsilon(1e-9));
    CHECK(flops(op.forward) == flops(none.forward));
    CHECK(op.model_flops.value == none.model_flops.value);  // recompute is not model FLOPs
    // With SP the two all-gathers rerun, the reduce-scatters are saved.
    CHECK(recompute_collectives(op.backward, cost::CollectiveKind::kAllGather) == (tp > 1 ? 2 : 0));
    CHECK(recompute_collectives(op.backward, cost::CollectiveKind::kReduceScatter) == 0);
    const auto shape = strat::activation_shape(sc);
    CHECK(op.activation_stored_bytes == cost::per_op_sac_saved_bytes(shape).value);
    CHECK(op.activation_full_bytes == cost::per_op_sac_backward_bytes(shape).value);
    CHECK(op.activation_stored_bytes < none.activation_stored_bytes);
  }
  // Without SP the all-reduces are not in the save list: they rerun.
  auto sc = llama(2, false);
  sc.training.recompute = cost::Recompute::kPerOp;
  const auto op = strat::transformer_layer_program(sc, cost::CostModel(sc.cluster));
  CHECK(recompute_collectives(op.backward, cost::CollectiveKind::kAllReduce) == 2);
}

TEST_CASE("per-op AC with torchao's float8 reruns no GEMM, keeps every linear's output") {
  for (const cost::QuantRecipe r :
       {cost::QuantRecipe::kTorchaoTensorwise, cost::QuantRecipe::kTorchaoRowwise}) {
    CAPTURE(cost::quant_recipe_name(r));
    auto sc = llama(2, true);
    sc.training.fp8.recipe = r;
    const cost::CostModel costs(sc.cluster);
    const auto none = strat::transformer_layer_program(sc, costs);
    sc.training.recompute = cost::Recompute::kPerOp;
    const auto op = strat::transformer_layer_program(sc, costs);
    // The rerun: norms and pointwise kernels, no GEMM FLOPs; the all-gathers of SP still rerun.
    CHECK(flops(op.backward) == doctest::Approx(flops(none.backward)).epsilon(1e-12));
    CHECK(recompute_collectives(op.backward, cost::CollectiveKind::kAllGather) == 2);
    int rerun_kernels = 0;
    for (const auto& st : op.backward) rerun_kernels += st.recompute ? st.compute.kernels : 0;
    CHECK(rerun_kernels > 0);
    const auto shape = strat::activation_shape(sc);
    CHECK(shape.scaled_mm_linears);
    CHECK(op.activation_stored_bytes == cost::per_op_sac_saved_bytes(shape).value);
    // Beside bf16's per-op set: wk's, wo's (TP-partial, whole) and w3's outputs.
    auto bf16 = sc;
    bf16.training.fp8 = {};
    const auto bf16_op = strat::transformer_layer_program(bf16, costs);
    const auto& m = sc.model;
    const double tokens = m.seq_len, t = 2;
    CHECK(op.activation_stored_bytes - bf16_op.activation_stored_bytes ==
          doctest::Approx(2 * tokens * m.kv_heads * m.head_dim() / t + 2 * tokens * m.hidden +
                          2 * tokens * m.ffn_hidden / t)
              .epsilon(1e-12));
  }
  // Transformer Engine's recipes are refused with per-op, at the recipe's path.
  auto te = llama(2, true);
  te.training.fp8.recipe = cost::QuantRecipe::kDelayed;
  te.training.recompute = cost::Recompute::kPerOp;
  cost::Diagnostics d("x.json");
  strat::check_scenario(te, d);
  CHECK_FALSE(d.ok());
}

TEST_CASE("Megatron's mlp module reruns fc1, the activation and fc2 with their collectives") {
  auto sc = llama(2, true);
  sc.training.attention = strat::AttentionKind::kUnfused;
  const cost::CostModel costs(sc.cluster);
  sc.training.recompute = cost::Recompute::kSelective;
  const auto core = strat::transformer_layer_program(sc, costs);
  sc.training.recompute_modules.mlp = true;
  const auto mlp = strat::transformer_layer_program(sc, costs);
  const auto& m = sc.model;
  const double tokens = m.seq_len, h = m.hidden, f = m.ffn_hidden, t = 2;
  const double fc = 2 * tokens * (2 * f / t) * h + 2 * tokens * h * (f / t);  // fc1 + fc2
  CHECK(flops(mlp.backward) - flops(core.backward) == doctest::Approx(fc).epsilon(1e-9));
  CHECK(recompute_collectives(mlp.backward, cost::CollectiveKind::kAllGather) == 1);
  CHECK(recompute_collectives(mlp.backward, cost::CollectiveKind::kReduceScatter) == 1);
  // Gate, up and down inputs dropped: 3 x 2 s f / t bytes (SwiGLU).
  CHECK(core.activation_stored_bytes - mlp.activation_stored_bytes ==
        doctest::Approx(3 * 2 * tokens * f / t).epsilon(1e-12));
  // layernorm: two norm kernels rerun, the QKV and fc1 inputs (2 s h / t each with SP) dropped.
  sc.training.recompute_modules = {.core_attn = true, .layernorm = true};
  const auto norms = strat::transformer_layer_program(sc, costs);
  CHECK(flops(norms.backward) == flops(core.backward));  // memory-bound kernels only
  CHECK(norms.backward.front().recompute);
  CHECK(core.activation_stored_bytes - norms.activation_stored_bytes ==
        doctest::Approx(2 * 2 * tokens * h / t).epsilon(1e-12));
  // The default list is the existing selective program, step for step.
  sc.training.recompute_modules = {};
  const auto again = strat::transformer_layer_program(sc, costs);
  CHECK(again.backward.size() == core.backward.size());
  CHECK(again.activation_stored_bytes == core.activation_stored_bytes);
}
