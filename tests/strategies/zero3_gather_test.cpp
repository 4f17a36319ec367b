// ZeRO-3 gathers as the framework issues them (strategies/data_parallel/zero3_gather_units.hpp): per layer one
// all-gather of the layer's parameters; per module (DeepSpeed) one per partitioned submodule,
// tensors at or below the persistence threshold kept whole and never gathered.
#include <doctest/doctest.h>

#include <numeric>
#include <vector>

#include "scenario_builder.hpp"
#include "strategies/data_parallel/zero3_gather_units.hpp"
#include "strategies/framework/framework_presets.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;

namespace {

double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

strat::ModelSpec gpt(int hidden) {
  strat::ModelSpec m = strat::find_model_preset("llama2-7b")->spec;
  m.hidden = hidden;
  m.heads = hidden / 64;
  m.kv_heads = m.heads;
  m.ffn_hidden = 4 * hidden;
  m.mlp = strat::MlpKind::kGelu;
  m.norm = strat::NormKind::kLayerNorm;
  m.linear_bias = true;
  return m;
}

const strat::Zero3Gathering kPerModuleAll{strat::Zero3Gather::kPerModule, 0};
const strat::Zero3Gathering kDeepSpeed{strat::Zero3Gather::kPerModule, 1e5};

const strat::CollectiveSummary* dp_all_gather(const strat::StepReport& r) {
  for (const auto& c : r.collectives) {
    if (c.kind == "dp" && c.op == "all-gather") return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("per layer: one unit, the layer's parameters on the TP rank") {
  const auto m = gpt(1024);
  const auto units = strat::zero3_gather_units(m, 2, strat::Zero3Gathering{});
  REQUIRE(units.size() == 1);
  CHECK(units[0] == strat::layer_params_per_tp_rank(m, 2));
}

TEST_CASE("per module with no persistent tensors: six submodules adding up to the layer") {
  for (int tp : {1, 2, 8}) {
    CAPTURE(tp);
    const auto gelu = gpt(2048);
    auto llama = strat::find_model_preset("llama2-70b")->spec;  // SwiGLU, RMSNorm, GQA, no bias
    for (const auto& m : {gelu, llama}) {
      const auto units = strat::zero3_gather_units(m, tp, kPerModuleAll);
      CHECK(units.size() == 6);  // 2 norms, QKV, projection, fc1, fc2
      CHECK(strat::layer_module_tensors_per_tp_rank(m, tp).size() == 6);
      CHECK(sum(units) ==
            doctest::Approx(strat::layer_params_per_tp_rank(m, tp)).epsilon(1e-14).scale(0));
    }
  }
}

TEST_CASE("a layer's parameter tensors: 12 for GPT (LayerNorm, biases), 6 for Llama") {
  CHECK(strat::layer_parameter_tensors(gpt(1024)) == 12);
  CHECK(strat::layer_parameter_tensors(strat::find_model_preset("llama2-70b")->spec) == 6);
}

TEST_CASE("DeepSpeed's 1e5-element persistence threshold leaves the four weight matrices") {
  // GPT h 1024, tp 1: norms (1,024 elements) and biases (at most 4,096) stay whole; the
  // matrices QKV 3h^2, projection h^2, fc1 and fc2 4h^2 each are gathered, one call each.
  const double h = 1024;
  const auto units = strat::zero3_gather_units(gpt(1024), 1, kDeepSpeed);
  CHECK(units == std::vector<double>{3 * h * h, h * h, 4 * h * h, 4 * h * h});
  // A threshold above every tensor gathers nothing.
  CHECK(strat::zero3_gather_units(gpt(1024), 1, {strat::Zero3Gather::kPerModule, 1e9}).empty());
}

TEST_CASE("DeepSpeed presets gather per module; the FSDP-style presets per layer") {
  for (const char* name : {"deepspeed", "megatron-deepspeed"}) {
    CAPTURE(name);
    const auto& z3 = strat::find_framework_preset(name)->spec.zero3;
    CHECK(z3.unit == strat::Zero3Gather::kPerModule);
    CHECK(z3.persistence_threshold == 1e5);
  }
  for (const char* name : {"megatron-lm", "torchtitan", "ideal"}) {
    CAPTURE(name);
    CHECK(strat::find_framework_preset(name)->spec.zero3.unit == strat::Zero3Gather::kPerLayer);
  }
}

TEST_CASE("the simulated step issues one all-gather per unit per layer pass") {
  // dp 8, ZeRO-3, 8 layers, 2 micro-batches: a layer's weights are gathered before its forward
  // and before its backward on each micro-batch.
  auto sc = test::small_scenario(8, 1, 1, 16, 1);
  sc.parallel.zero_stage = 3;
  const auto per_layer = test::simulate_report(sc);
  sc.training.framework.zero3 = kDeepSpeed;
  const auto per_module = test::simulate_report(sc);
  const auto* a = dp_all_gather(per_layer);
  const auto* b = dp_all_gather(per_module);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  const int layers = sc.model.layers, micro_batches = 2;
  CHECK(a->count_per_gpu == 2 * layers * micro_batches);
  // llama2-7b's layer: no biases, RMSNorm weights of 4,096 elements stay whole: 4 matrices.
  CHECK(b->count_per_gpu == 4 * 2 * layers * micro_batches);
  // The same matrices in more calls: smaller messages, more latency, never a faster step.
  CHECK(b->mean_message_bytes < a->mean_message_bytes);
  CHECK(per_module.step_time_s >= per_layer.step_time_s);
}

TEST_CASE("DeepSpeed 2021 (deepspeed-2021): no prefetch, three gathers under full recompute, a "
          "reduce-scatter per parameter, the host waiting for each") {
  const auto& z3 = strat::find_framework_preset("deepspeed-2021")->spec.zero3;
  CHECK(z3.unit == strat::Zero3Gather::kPerModule);
  CHECK_FALSE(z3.prefetch);
  CHECK(z3.blocking_fetch);
  CHECK(z3.regather_for_recompute);
  CHECK(z3.reduce_per_unit);
  CHECK(strat::find_framework_preset("deepspeed")->spec.zero3.prefetch);

  auto sc = test::small_scenario(8, 1, 1, 16, 1);
  sc.parallel.zero_stage = 3;
  sc.training.recompute = cost::Recompute::kFull;
  sc.training.framework = strat::find_framework_preset("deepspeed")->spec;
  const auto today = test::simulate_report(sc);
  sc.training.framework = strat::find_framework_preset("deepspeed-2021")->spec;
  const auto old = test::simulate_report(sc);
  const auto* a = dp_all_gather(today);
  const auto* b = dp_all_gather(old);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  const int layers = sc.model.layers, micro_batches = 2;
  CHECK(a->count_per_gpu == 4 * 2 * layers * micro_batches);
  CHECK(b->count_per_gpu == 4 * 3 * layers * micro_batches);  // forward, rerun, backward
  double today_rs = 0, old_rs = 0;
  for (const auto& c : today.collectives) {
    if (c.kind == "dp" && c.op == "reduce-scatter") today_rs = c.count_per_gpu;
  }
  for (const auto& c : old.collectives) {
    if (c.kind == "dp" && c.op == "reduce-scatter") old_rs = c.count_per_gpu;
  }
  // One per layer against one per weight matrix and one for the rest (the RMSNorm weights) of
  // each layer; the embedding's and head's reductions are the same in both.
  CHECK(old_rs - today_rs == 4 * layers * micro_batches);
  // Each fetch: a sync before, two after; each reduce-scatter after the first waits for the last.
  CHECK(old.host_syncs_per_step >= today.host_syncs_per_step + 3 * b->count_per_gpu);
  CHECK(old.step_time_s > today.step_time_s);
}

TEST_CASE("without prefetch the gathers wait for the previous layer, and hold no more memory") {
  auto sc = test::small_scenario(8, 1, 1, 16, 1);
  sc.parallel.zero_stage = 3;
  sc.training.framework = strat::find_framework_preset("deepspeed")->spec;
  const auto prefetching = test::simulate_report(sc);
  sc.training.framework.zero3.prefetch = false;
  const auto serial = test::simulate_report(sc);
  CHECK(serial.step_time_s > prefetching.step_time_s);
  CHECK(serial.memory.front().peak_bytes <= prefetching.memory.front().peak_bytes);
  // Only the order changed: the same calls.
  CHECK(dp_all_gather(serial)->count_per_gpu == dp_all_gather(prefetching)->count_per_gpu);
}

TEST_CASE("a blocking fetch costs the host its syncs, one view per rank and the call") {
  auto sc = test::small_scenario(8, 1, 1, 16, 1);
  sc.parallel.zero_stage = 3;
  sc.training.framework = strat::find_framework_preset("deepspeed")->spec;
  sc.training.framework.zero3.prefetch = false;
  sc.parallel.dp_bucket = cost::Bytes{0};  // one bucket: no bucket syncs
  const auto plain = test::simulate_report(sc);
  sc.training.framework.zero3.blocking_fetch = true;
  const auto blocking = test::simulate_report(sc);
  const auto* g = dp_all_gather(blocking);
  REQUIRE(g != nullptr);
  // The layers' reduce-scatters (the embedding's and head's are not ZeRO-3's per-layer calls).
  const double reduces = sc.model.layers * 2.0;
  const auto& f = sc.training.framework;
  const double per_fetch = strat::zero3_blocking_fetch_host(f, 8).to_seconds();
  CHECK(per_fetch == doctest::Approx((3 * 12 + 8 * 2 + 15) * 1e-6));
  // ... and one sync at the end of each micro-batch's backward (2 micro-batches).
  CHECK(blocking.host_busy_s - plain.host_busy_s ==
        doctest::Approx(g->count_per_gpu * per_fetch +
                        reduces * f.host.collective_call.to_seconds() +
                        2 * f.host.sync.to_seconds()));
  CHECK(blocking.host_syncs_per_step - plain.host_syncs_per_step == 3 * g->count_per_gpu + 2);
}

TEST_CASE("blocking reduce-scatters: the host waits for the bucket before the full one") {
  // One layer's gradients per bucket: every new layer's first call flushes; the host then waits
  // for the bucket before, never for the one just issued.
  auto sc = test::small_scenario(8, 1, 1, 16, 1);
  sc.parallel.zero_stage = 3;
  sc.training.framework = strat::find_framework_preset("deepspeed")->spec;
  sc.training.framework.zero3.prefetch = false;
  sc.training.framework.zero3.blocking_fetch = true;
  sc.parallel.dp_bucket = cost::Bytes{0};  // one bucket
  const auto one_bucket = test::simulate_report(sc);
  sc.parallel.dp_bucket = cost::Bytes{strat::layer_params_per_tp_rank(sc.model, 1) * 1.5 *
                                      sc.training.gradient_bytes()};
  const auto per_layer = test::simulate_report(sc);
  // 8 layers per backward: buckets of one layer each after the first, 7 flushes, of which the
  // first waits for nothing: 6 syncs per micro-batch, 2 micro-batches.
  CHECK(per_layer.host_syncs_per_step - one_bucket.host_syncs_per_step == 2 * 6);
  CHECK(per_layer.step_time_s >= one_bucket.step_time_s);
}
