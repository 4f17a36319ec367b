// Multi-token prediction (DeepSeek-V3 sec. 2.2; issue 27): the modules' parameters on the last
// stage against the model's count, their FLOPs exactly, and what they add to a step.
#include <doctest/doctest.h>

#include "costmodel/cost_model.hpp"
#include "report/step_report.hpp"
#include "scenario_builder.hpp"
#include "strategies/input/model_presets.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;

TEST_CASE("MTP parameters on one rank add up to the model's count with no sharding") {
  for (const char* name : {"deepseek-v3", "llama2-7b"}) {
    CAPTURE(name);
    strat::ModelSpec m = strat::find_model_preset(name)->spec;
    m.mtp_layers = 2;
    strat::ParallelSpec p;  // tp = ep = etp = 1
    const strat::LayerParams held = strat::mtp_params_on_rank(m, p);
    CHECK(held.dense + held.expert == doctest::Approx(static_cast<double>(m.mtp_params())));
    // The head's count on the last stage carries the dense part and, with a pipeline, the last
    // stage's own copy of the (untied) embedding table the modules read (Megatron's GPTModel).
    strat::ModelSpec none = m;
    none.mtp_layers = 0;
    CHECK(strat::head_params_per_tp_rank(m, 1, 0) - strat::head_params_per_tp_rank(none, 1, 0) ==
          doctest::Approx(held.dense));
    const double table = static_cast<double>(m.vocab) * m.hidden / 2;
    CHECK(strat::head_params_per_tp_rank(m, 2, 3) - strat::head_params_per_tp_rank(none, 2, 3) ==
          doctest::Approx(strat::mtp_params_on_rank(m,
                                                    [] {
                                                      strat::ParallelSpec tp2;
                                                      tp2.tp = 2;
                                                      return tp2;
                                                    }())
                              .dense +
                          table));
  }
  // DeepSeek-V3's module over ep 64: its 256 experts on 64 ranks, the rest whole.
  const strat::ModelSpec v3 = strat::find_model_preset("deepseek-v3")->spec;
  strat::ParallelSpec ep64;
  ep64.ep = 64;
  ep64.etp = 1;
  const strat::LayerParams sharded = strat::mtp_params_on_rank(v3, ep64);
  CHECK(sharded.expert == doctest::Approx(256.0 / 64 * 3 * 7168 * 2048));
}

TEST_CASE("each MTP module adds its projection, a layer and a head pass to the head's FLOPs") {
  auto sc = test::small_scenario(8, 1, 1, 8, 1);
  const cost::CostModel costs(sc.cluster);
  const auto plain = strat::head_program(sc, costs);
  const auto layer = strat::transformer_layer_program(sc, costs);
  sc.model.mtp_layers = 1;
  const auto one = strat::head_program(sc, costs);
  const double T = sc.model.seq_len, h = sc.model.hidden;
  CHECK(one.model_flops.value == doctest::Approx(2 * plain.model_flops.value +
                                                 layer.model_flops.value + 3 * 2 * T * 2 * h * h)
                                     .epsilon(1e-12));
  CHECK(one.activation_stored_bytes > 2 * plain.activation_stored_bytes);
  CHECK(one.forward.size() > plain.forward.size() + layer.forward.size());
  CHECK(one.weight_grad.size() == plain.weight_grad.size() * 2 + layer.weight_grad.size() + 1);
}

TEST_CASE("an MTP module costs the last stage time and memory, and nothing elsewhere") {
  auto base = test::small_scenario(2, 1, 4, 16, 1);
  base.model.layers = 8;
  auto mtp = base;
  mtp.model.mtp_layers = 1;
  const auto a = test::simulate_report(base);
  const auto b = test::simulate_report(mtp);
  CHECK(b.step_time_s > a.step_time_s);
  REQUIRE(a.memory.size() == b.memory.size());
  for (std::size_t d = 0; d < a.memory.size(); ++d) {
    CAPTURE(d);
    if (a.memory[d].stage == 3) {
      CHECK(b.memory[d].peak_bytes > a.memory[d].peak_bytes);
    } else {
      CHECK(b.memory[d].peak_bytes == doctest::Approx(a.memory[d].peak_bytes));
    }
  }
}
