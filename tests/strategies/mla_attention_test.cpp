// Multi-head latent attention (DeepSeek-V2/V3): its parameters per tensor-parallel rank and its
// forward GEMM FLOPs, exactly, for the DeepSeek-V3 shape.
#include <doctest/doctest.h>

#include "costmodel/cost_model.hpp"
#include "scenario_builder.hpp"
#include "strategies/input/model_presets.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;

namespace {

// A small MLA layer: h 1024, 8 heads, q_r 256, kv_r 128, d_n 64, d_r 32, d_v 64, FlashAttention.
strat::Scenario small_mla() {
  auto sc = test::small_scenario(1, 1, 1, 1, 1);
  sc.model.hidden = 1024;
  sc.model.heads = 8;
  sc.model.kv_heads = 8;
  sc.model.ffn_hidden = 2048;
  sc.model.mla = strat::MlaSpec{256, 128, 64, 32, 64};
  sc.training.attention = strat::AttentionKind::kFlash;
  return sc;
}

}  // namespace

TEST_CASE("MLA: the down projections whole on every rank, the rest split over tp") {
  const strat::ModelSpec& v3 = strat::find_model_preset("deepseek-v3")->spec;
  CHECK(strat::attention_params_per_tp_rank(v3, 1) ==
        static_cast<double>(v3.attention_params()));
  const double h = 7168, a = 128;
  const double duplicated = h * 1536 + 1536 + h * (512 + 64) + 512;
  const double split = 1536 * a * 192 + 512 * a * 256 + a * 128 * h;
  CHECK(strat::attention_params_per_tp_rank(v3, 4) == doctest::Approx(duplicated + split / 4)
                                                           .epsilon(1e-15));
}

TEST_CASE("MLA's forward GEMMs: every projection and the core at the mean head width") {
  auto sc = small_mla();
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  const double T = sc.model.seq_len, h = 1024, a = 8;
  const double projections = 2 * T *
                             (h * 256 + 256 * a * 96 + h * (128 + 32) + 128 * a * (64 + 64) +
                              a * 64 * h);
  const double mlp = 2 * T * 3 * h * 2048;
  // FlashAttention's causal forward: 4 s^2 d / 2 per head at the mean head width (64 + 32 +
  // 64) / 2 = 80: exactly Q K^T over 96 and P V over 64.
  const double core = 4.0 * T * T * 80 / 2 * a;
  CHECK(p.model_flops.value / 3 == doctest::Approx(projections + mlp + core).epsilon(1e-9));
}

TEST_CASE("Megatron's mla_up_proj: q, k and v not kept, the up projections rerun (by hand)") {
  auto sc = small_mla();
  sc.training.recompute = cost::Recompute::kSelective;
  const cost::CostModel costs(sc.cluster);
  const auto core = strat::transformer_layer_program(sc, costs);
  auto up = sc;
  up.training.recompute_modules.mla_up_proj = true;
  const auto p = strat::transformer_layer_program(up, costs);
  const double T = sc.model.seq_len, a = 8;
  // Korthikanti's q, k, v at MLA's mean head width (64 + 32 + 64) / 2 = 80: 3 x 2 T a 80 bytes.
  CHECK(core.activation_stored_bytes - p.activation_stored_bytes ==
        doctest::Approx(3 * 2 * T * a * 80).epsilon(1e-12));
  // The backward reruns q up [T x 256] x [256 x a 96] and kv up [T x 128] x [128 x a 128].
  auto flops = [](const std::vector<strat::LayerStep>& steps) {
    double f = 0;
    for (const auto& s : steps) f += s.is_collective ? 0 : s.compute.flops.value;
    return f;
  };
  CHECK(flops(p.backward) - flops(core.backward) ==
        doctest::Approx(2 * T * (256 * a * 96 + 128 * a * 128)).epsilon(1e-9));
  CHECK(flops(p.forward) == flops(core.forward));
}
