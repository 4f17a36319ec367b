// FP8 linears under sequence parallelism and its overlaps (strategies/layers/step_writer.hpp
// Dims::gather_e, tp_overlap.hpp): Transformer Engine's recipes gather the FP8 copy of the local
// shard (1 + s bytes per element) and reduce-scatter in 16 bits, with and without userbuffers;
// torchao's gather 16 bits; AsyncTP with torchao's float8 chunks the reduce-scatters only; the
// chunk GEMMs are FP8 GEMMs; the registry's refusals name the recipe.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "costmodel/cost_model.hpp"
#include "costmodel/precision/quantization.hpp"
#include "parser_problems.hpp"
#include "layer_steps.hpp"
#include "scenario_builder.hpp"
#include "strategies/framework/framework_presets.hpp"
#include "strategies/framework/host_plan.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/layers/tp_overlap.hpp"

using namespace parasim;
using cost::CollectiveKind;
using cost::QuantRecipe;
using strat::TpCommOverlap;

namespace {

constexpr int kTp = 8;

// Llama 2 70B layers at tp 8 with SP, 4K tokens, FP8 linears with `recipe`.
strat::Scenario scenario(TpCommOverlap mode, QuantRecipe recipe) {
  auto sc = test::llama2_70b_sp(kTp, mode);
  sc.training.fp8.recipe = recipe;
  return sc;
}

using test::collectives;
using test::compute_step;
using Sum = test::CollectiveSum;

// The s x h elements of the whole (gathered) hidden state.
double sh(const strat::Scenario& sc) { return 1.0 * sc.model.seq_len * sc.model.hidden; }

// The GPU time of one FP8 GEMM as StepWriter::linear_gemm costs it (plus the queued gap).
sim::Time fp8_gemm(const strat::Scenario& sc, const cost::CostModel& costs, std::int64_t m,
                   std::int64_t n, std::int64_t k, double slowdown = 1) {
  const sim::Time body = costs.gemm_body({m, n, k, 1, cost::Dtype::kFp8});
  const double rate = cost::quant_gemm_rate(sc.training.fp8.recipe, sc.cluster.device.architecture);
  return sim::Time::ps_rounded(static_cast<double>(body.picoseconds()) * slowdown / rate) +
         strat::queued_kernel_gap(costs.device());
}

}  // namespace

TEST_CASE("FP8 under SP: TE's recipes gather 1 + s bytes per element, torchao's 2") {
  struct Case {
    QuantRecipe recipe;
    double gather_bytes_per_element;
    double dy_bytes_per_element;
  };
  // delayed and tensorwise: one scale per tensor, dY's column-wise copy transposed after the
  // gather; blockwise: an fp32 scale per 1 x 128 row block, dY's two copies gathered; torchao:
  // its float8 casts after a bf16 gather.
  for (const Case c : {Case{QuantRecipe::kDelayed, 1.0, 1.0},
                       Case{QuantRecipe::kTensorwise, 1.0, 1.0},
                       Case{QuantRecipe::kBlockwise, 1.0 + 4.0 / 128, 2 * (1.0 + 4.0 / 128)},
                       Case{QuantRecipe::kTorchaoTensorwise, 2.0, 2.0},
                       Case{QuantRecipe::kTorchaoRowwise, 2.0, 2.0}}) {
    CAPTURE(cost::quant_recipe_name(c.recipe));
    const auto sc = scenario(TpCommOverlap::kNone, c.recipe);
    const cost::CostModel costs(sc.cluster);
    const auto p = strat::transformer_layer_program(sc, costs);
    for (const char* label : {"attn all-gather", "mlp all-gather"}) {
      CHECK(collectives(p.forward, label, CollectiveKind::kAllGather).bytes ==
            sh(sc) * c.gather_bytes_per_element);
    }
    for (const char* label : {"attn bwd all-gather", "mlp bwd all-gather"}) {
      CHECK(collectives(p.backward, label, CollectiveKind::kAllGather).bytes ==
            sh(sc) * c.dy_bytes_per_element);
    }
    // The reduce-scatters carry the GEMMs' 16-bit outputs (and dX) whatever the recipe.
    CHECK(collectives(p.forward, "mlp reduce-scatter", CollectiveKind::kReduceScatter).bytes ==
          2 * sh(sc));
    CHECK(collectives(p.backward, "attn bwd reduce-scatter", CollectiveKind::kReduceScatter)
              .bytes == 2 * sh(sc));
  }
  // MXFP8 on Blackwell: an E8M0 scale per 32 elements; dY's two copies.
  auto mx = scenario(TpCommOverlap::kNone, QuantRecipe::kMxfp8);
  mx.cluster = cost::find_cluster_preset("dgx-b200")->spec;
  const cost::CostModel costs(mx.cluster);
  const auto mp = strat::transformer_layer_program(mx, costs);
  CHECK(collectives(mp.forward, "attn all-gather", CollectiveKind::kAllGather).bytes ==
        sh(mx) * (1 + 1.0 / 32));
  CHECK(collectives(mp.backward, "mlp bwd all-gather", CollectiveKind::kAllGather).bytes ==
        sh(mx) * 2 * (1 + 1.0 / 32));
  // Userbuffers rings dY's row-wise copy only.
  mx.parallel.tp_comm_overlap = TpCommOverlap::kUserbuffers;
  const auto ub = strat::transformer_layer_program(mx, costs);
  const Sum ring =
      collectives(ub.backward, "mlp fc2 dgrad all-gather chunk", CollectiveKind::kSendRecv);
  CHECK(ring.bytes * kTp / (kTp - 1) == doctest::Approx(sh(mx) * (1 + 1.0 / 32)).epsilon(1e-12));
}

TEST_CASE("FP8 under SP: TE casts the local shard before its gather") {
  const auto sc = scenario(TpCommOverlap::kNone, QuantRecipe::kDelayed);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  // The block before the attention's gather: the input norm, then the QKV input's cast of this
  // rank's s / tp tokens, closed before the gather that follows it.
  const strat::LayerStep* norm = compute_step(p.forward, "attn norm");
  REQUIRE(norm != nullptr);
  const auto& m = sc.model;
  const double tokens = m.seq_len, t = kTp;
  const double qkv_n = (m.heads + 2.0 * m.kv_heads) * m.head_dim() / t;
  const auto local = cost::linear_quant_kernels(QuantRecipe::kDelayed,
                                                sc.cluster.device.architecture, tokens / t, qkv_n,
                                                m.hidden);
  const sim::Time gap = strat::queued_kernel_gap(costs.device());
  sim::Time expected = costs.memory_bound_body(cost::Bytes{2 * tokens / t * m.hidden * 2}) + gap;
  for (double b : local.forward) expected += costs.memory_bound_body(cost::Bytes{b}) + gap;
  CHECK(norm->compute.kernels == 1 + static_cast<int>(local.forward.size()));
  CHECK(norm->compute.time == expected);
  // Then the gather, then the QKV GEMM in FP8 over every token.
  const auto gather = std::find_if(p.forward.begin(), p.forward.end(), [](const auto& st) {
    return st.is_collective && st.collective.label == "attn all-gather";
  });
  REQUIRE(gather != p.forward.end());
  REQUIRE(gather != p.forward.begin());
  CHECK((gather - 1)->compute.label == "attn norm");
}

TEST_CASE("userbuffers with TE's FP8: the ring moves FP8 shards, the GEMM chunks run in FP8") {
  const auto sc = scenario(TpCommOverlap::kUserbuffers, QuantRecipe::kDelayed);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  for (const char* label : {"attn qkv all-gather chunk", "mlp fc1 all-gather chunk"}) {
    CAPTURE(label);
    const Sum ring = collectives(p.forward, label, CollectiveKind::kSendRecv);
    CHECK(ring.count == kTp - 1);
    CHECK(ring.bytes + sh(sc) / kTp == sh(sc));  // FP8: one byte per element, exact
  }
  for (const char* label : {"attn proj dgrad all-gather chunk", "mlp fc2 dgrad all-gather chunk"}) {
    CAPTURE(label);
    const Sum ring = collectives(p.backward, label, CollectiveKind::kSendRecv);
    CHECK(ring.bytes + sh(sc) / kTp == sh(sc));
  }
  // The pipelined reduce-scatters stay 16-bit (fp8_buf false); bulk: the input gathered in FP8
  // for wgrad, dX reduce-scattered in 16 bits.
  CHECK(collectives(p.forward, "mlp fc2 reduce-scatter chunk", CollectiveKind::kReduceScatter)
            .bytes == 2 * sh(sc));
  CHECK(collectives(p.backward, "attn qkv bulk all-gather", CollectiveKind::kAllGather).bytes ==
        sh(sc));
  CHECK(collectives(p.backward, "mlp fc1 bulk reduce-scatter", CollectiveKind::kReduceScatter)
            .bytes == 2 * sh(sc));
  // No whole gather is left beside the ring.
  CHECK(collectives(p.forward, "attn all-gather", CollectiveKind::kAllGather).count == 0);
  // Chunk GEMMs: the ring's at full SM count, the pipeline's at the SM margin, both FP8.
  const auto& m = sc.model;
  const strat::LayerStep* fc1 = compute_step(p.forward, "mlp fc1 chunk");
  REQUIRE(fc1 != nullptr);
  CHECK(fc1->compute.time == fp8_gemm(sc, costs, m.seq_len / kTp, 2 * m.ffn_hidden / kTp, m.hidden));
  const strat::LayerStep* fc2 = compute_step(p.forward, "mlp fc2 chunk");
  REQUIRE(fc2 != nullptr);
  CHECK(fc2->compute.time == fp8_gemm(sc, costs, m.seq_len / 4, m.hidden, m.ffn_hidden / kTp,
                                      strat::detail::sm_margin_slowdown(132, 16)));
  // Faster than the same FP8 layer with whole collectives.
  auto serial = sc;
  serial.parallel.tp_comm_overlap = TpCommOverlap::kNone;
  CHECK(test::simulate_report(sc).step_time_s < test::simulate_report(serial).step_time_s);
}

TEST_CASE("async-tp with torchao's float8: the gathers stay whole, the reduce-scatters chunk") {
  for (const QuantRecipe r : {QuantRecipe::kTorchaoTensorwise, QuantRecipe::kTorchaoRowwise}) {
    CAPTURE(cost::quant_recipe_name(r));
    auto sc = scenario(TpCommOverlap::kAsyncTp, r);
    sc.training.framework = strat::find_framework_preset("torchtitan")->spec;
    sc.training.framework.compile.enabled = true;
    const cost::CostModel costs(sc.cluster);
    const auto p = strat::transformer_layer_program(sc, costs);
    // Forward: torchao casts the gathered bf16 input, so the pass fuses no all-gather.
    CHECK(collectives(p.forward, "attn all-gather", CollectiveKind::kAllGather).bytes ==
          2 * sh(sc));
    CHECK(collectives(p.forward, "mlp all-gather", CollectiveKind::kAllGather).bytes ==
          2 * sh(sc));
    CHECK(collectives(p.forward, "attn wqkv all-gather chunk", CollectiveKind::kSendRecv).count ==
          0);
    CHECK(collectives(p.backward, "mlp bwd all-gather", CollectiveKind::kAllGather).bytes ==
          2 * sh(sc));
    // The _scaled_mm before each reduce-scatter is chunked with it: tp - 1 peer copies of S / tp.
    for (const char* label : {"attn wo reduce-scatter chunk", "mlp w2 reduce-scatter chunk"}) {
      CAPTURE(label);
      const Sum s = collectives(p.forward, label, CollectiveKind::kSendRecv);
      CHECK(s.count == kTp - 1);
      CHECK(s.bytes + 2 * sh(sc) / kTp == 2 * sh(sc));
    }
    for (const char* label :
         {"attn wqkv dgrad reduce-scatter chunk", "mlp w1 w3 dgrad reduce-scatter chunk"}) {
      CAPTURE(label);
      CHECK(collectives(p.backward, label, CollectiveKind::kSendRecv).count == kTp - 1);
    }
    CHECK(collectives(p.forward, "attn reduce-scatter", CollectiveKind::kReduceScatter).count == 0);
    const auto& m = sc.model;
    const strat::LayerStep* w2 = compute_step(p.forward, "mlp w2 chunk");
    REQUIRE(w2 != nullptr);
    CHECK(w2->compute.time == fp8_gemm(sc, costs, m.seq_len / kTp, m.hidden, m.ffn_hidden / kTp));
    // The same FP8 weights counted as without the overlap (their casts and elements).
    auto serial = sc;
    serial.parallel.tp_comm_overlap = TpCommOverlap::kNone;
    const auto q = strat::transformer_layer_program(serial, costs);
    CHECK(p.fp8_weights.elements == q.fp8_weights.elements);
    CHECK(p.fp8_weights.time == q.fp8_weights.time);
    CHECK(test::simulate_report(sc).step_time_s < test::simulate_report(serial).step_time_s);
  }
}

TEST_CASE("tp_comm_overlap with FP8: each overlap takes its own library's recipes") {
  const auto text = [](const char* framework, const char* overlap, const char* recipe) {
    return std::string(R"({"model": "llama3-8b", "cluster": "dgx-h100",
      "training": {"global_batch": 8, "micro_batch": 1, "attention": "flash", "precision": "fp8",
                   "fp8": {"recipe": ")") +
           recipe + R"("}, "framework": )" + framework + R"(},
      "parallel": {"dp": 1, "tp": 8, "sequence_parallel": true, "tp_comm_overlap": ")" +
           overlap + R"("}})";
  };
  const char* const titan = R"({"preset": "torchtitan", "compile": true})";
  const char* const megatron = R"("megatron-lm")";
  CHECK_NOTHROW(strat::parse_scenario(text(titan, "async-tp", "torchao-tensorwise"), "a.json"));
  CHECK_NOTHROW(strat::parse_scenario(text(titan, "async-tp", "torchao-rowwise"), "b.json"));
  CHECK_NOTHROW(strat::parse_scenario(text(megatron, "userbuffers", "delayed"), "c.json"));
  CHECK_NOTHROW(strat::parse_scenario(text(megatron, "userbuffers", "tensorwise"), "d.json"));
  CHECK(test::has_problem(test::problems_of(text(megatron, "async-tp", "delayed")),
                          "/training/fp8/recipe", "Transformer Engine's"));
  CHECK(test::has_problem(test::problems_of(text(megatron, "userbuffers", "blockwise")),
                          "/training/fp8/recipe", "Unsupported quantizer for Userbuffers"));
  CHECK(test::has_problem(test::problems_of(text(megatron, "userbuffers", "torchao-tensorwise")),
                          "/training/fp8/recipe", "torchao's"));
}
