// FlashAttention: no s^2 tensors stored, causal half of the attention-core FLOPs, one kernel.
#include <doctest/doctest.h>

#include "costmodel/activation_memory.hpp"
#include "costmodel/cost_model.hpp"
#include "scenario_builder.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;

TEST_CASE("FlashAttention stores Korthikanti's selective activations and halves the core FLOPs") {
  auto sc = test::small_scenario(1, 1, 1, 1, 1);
  const cost::CostModel costs(sc.cluster);
  const auto unfused = strat::transformer_layer_program(sc, costs);
  sc.training.attention = strat::AttentionKind::kFlash;
  const auto flash = strat::transformer_layer_program(sc, costs);
  const auto shape = strat::activation_shape(sc);
  CHECK(flash.activation_stored_bytes ==
        cost::activation_bytes_per_layer(shape, cost::Recompute::kSelective).value);
  CHECK(unfused.activation_stored_bytes ==
        cost::activation_bytes_per_layer(shape, cost::Recompute::kNone).value);
  // Forward FLOPs differ by exactly half of the attention core's 4 b a s^2 d (causal skipping).
  auto flops = [](const std::vector<strat::LayerStep>& steps) {
    double f = 0;
    for (const auto& s : steps) {
      if (!s.is_collective) f += s.compute.flops.value;
    }
    return f;
  };
  const double b = 1, a = sc.model.heads, s = sc.model.seq_len, d = sc.model.head_dim();
  CHECK(flops(unfused.forward) - flops(flash.forward) ==
        doctest::Approx(0.5 * 4 * b * a * s * s * d).epsilon(1e-12).scale(0));
}
