// torchtitan's Llama block, eager and under torch.compile (strategies/layers/torchtitan_block.hpp,
// docs/pytorch-native.md): kernel counts per block against a hand count of torchtitan 0.3.0's
// code and Inductor's fusions, the fused kernels' bytes, the compiled wrapper's host costs, and
// the parser's errors.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costmodel/cost_model.hpp"
#include "parser_problems.hpp"
#include "scenario_builder.hpp"
#include "strategies/framework/framework_presets.hpp"
#include "strategies/framework/host_plan.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;
using sim::Time;

namespace {

// Llama 3 8B's block (GQA: 32 heads, 8 kv heads, SwiGLU) at tp 1, FlashAttention, no recompute,
// with torchtitan's framework (or `preset`).
strat::Scenario titan(bool compile, const char* preset = "torchtitan",
                      const char* model = "llama3-8b") {
  auto sc = test::small_scenario(1, 1, 1, 1, 1);
  sc.model = strat::find_model_preset(model)->spec;
  sc.model.layers = 4;
  sc.model.seq_len = 2048;
  sc.training.attention = strat::AttentionKind::kFlash;
  sc.training.framework = strat::find_framework_preset(preset)->spec;
  sc.training.framework.compile.enabled = compile;
  return sc;
}

int kernels(const std::vector<strat::LayerStep>& steps, const std::string& label = "") {
  int k = 0;
  for (const auto& s : steps) {
    if (!s.is_collective && (label.empty() || s.compute.label == label)) k += s.compute.kernels;
  }
  return k;
}

const strat::LayerStep& block(const std::vector<strat::LayerStep>& steps,
                              const std::string& label) {
  for (const auto& s : steps) {
    if (!s.is_collective && s.compute.label == label) return s;
  }
  FAIL("no block " << label);
  return steps.front();
}

}  // namespace

TEST_CASE("torchtitan's eager block: 21 kernels forward, 28 backward (GQA, tp 1)") {
  const auto sc = titan(false);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  // attn: norm, wqkv, 3 copies, RoPE 3 + 3, attention, wo, residual add.
  CHECK(kernels(p.forward, "attn") == 14);
  // mlp: norm, w1, w3, silu, mul, w2, residual add.
  CHECK(kernels(p.forward, "mlp") == 7);
  // mlp bwd: w2 (2), mul (2), silu (1), w3 (2), w1 (2), input-gradient sum, norm (2), residual.
  CHECK(kernels(p.backward, "mlp bwd") == 13);
  // attn bwd: wo (2), attention, RoPE 3 + 3, cat, wqkv (2), norm (2), residual.
  CHECK(kernels(p.backward, "attn bwd") == 15);
  CHECK(kernels(p.forward) == 21);
  CHECK(kernels(p.backward) == 28);
}

TEST_CASE("the compiled block: Inductor's fusions leave 12 kernels forward, 20 backward") {
  const auto sc = titan(true);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  // attn: norm, wqkv, RoPE q, RoPE k+v, attention, wo.
  CHECK(kernels(p.forward, "attn") == 6);
  // mlp: residual add + norm, w1, w3, silu*mul, w2, residual add.
  CHECK(kernels(p.forward, "mlp") == 6);
  // mlp bwd: w2 (2), silu*mul bwd, w3 (2), w1 (2), norm dx + adds, norm dw (2).
  CHECK(kernels(p.backward, "mlp bwd") == 10);
  // attn bwd: wo (2), attention, RoPE q, RoPE k+v, wqkv (2), norm dx + residual, norm dw (2).
  CHECK(kernels(p.backward, "attn bwd") == 10);
  // Same GEMMs and attention: the same FLOPs as eager.
  const auto eager = strat::transformer_layer_program(titan(false), costs);
  CHECK(p.model_flops.value == eager.model_flops.value);
  // Multi-head attention (heads = kv heads): q, k and v rotated in one kernel each way.
  const auto mha = strat::transformer_layer_program(titan(true, "torchtitan", "llama2-7b"), costs);
  CHECK(kernels(mha.forward) == 11);
  CHECK(kernels(mha.backward) == 19);
}

TEST_CASE("Megatron's presets keep Megatron's layer program") {
  const auto sc = titan(false, "ideal");
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  CHECK(kernels(p.forward) ==
        10);  // attn: norm, QKV, flash, proj, bda; mlp: norm, fc1, act, fc2, bda
  CHECK(kernels(p.backward) == 21);  // apex's 3-kernel norm backward, fused QKV join, ...
}

TEST_CASE("the fused kernels' bytes: the compiled MLP forward by hand") {
  const auto sc = titan(true);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  const double T = 2048, h = 4096, f = sc.model.ffn_hidden, e = 2;
  const double hb = T * h * e, bsf = T * f * e;
  const Time gap = strat::queued_kernel_gap(costs.device());
  auto mem = [&](double bytes) { return costs.memory_bound_body(cost::Bytes{bytes}) + gap; };
  auto gemm = [&](double m, double n, double k) {
    return costs.gemm_body(cost::GemmShape{static_cast<long long>(m), static_cast<long long>(n),
                                           static_cast<long long>(k), 1, cost::Dtype::kBf16}) +
           gap;
  };
  // x + attention and ffn_norm in one kernel (read 2, write 2), w1, w3, silu*mul (read 2, write
  // 1), w2, the last residual add (read 2, write 1).
  const Time expected =
      mem(4 * hb) + gemm(T, f, h) + gemm(T, f, h) + mem(3 * bsf) + gemm(T, h, f) + mem(3 * hb);
  CHECK(block(p.forward, "mlp").compute.time == expected);
  // Eager: ffn_norm, w1, w3, silu (read, write), mul (read 2, write), w2, residual add.
  const auto eager = strat::transformer_layer_program(titan(false), costs);
  const Time eager_expected = mem(2 * hb) + gemm(T, f, h) + gemm(T, f, h) + mem(2 * bsf) +
                              mem(3 * bsf) + gemm(T, h, f) + mem(3 * hb);
  CHECK(block(eager.forward, "mlp").compute.time == eager_expected);
}

TEST_CASE("a compiled block's host work: the wrapper per kernel and one region call per pass") {
  const auto sc = titan(true);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  const auto& f = sc.training.framework;
  const Time launch = Time::us(4);
  auto total = [](const std::vector<strat::StepHost>& host) {
    Time t;
    for (const auto& s : host) t += s.total;
    return t;
  };
  strat::HostContext fwd{true, false, false};
  CHECK(total(strat::step_host_costs(p.forward, fwd, f, launch)) ==
        (f.host.compiled_kernel + launch) * 12 + f.host.compiled_region_forward);
  strat::HostContext bwd{true, true, false};
  CHECK(total(strat::step_host_costs(p.backward, bwd, f, launch)) ==
        (f.host.compiled_kernel + launch) * 20 + f.host.compiled_region_backward);
  // The sourced figures (framework_presets.cpp): 9.1 - 3.0 us, 44.3 - 6.8 us, 17 + 5.5 us.
  CHECK(f.host.compiled_kernel == Time::ns(6100));
  CHECK(f.host.compiled_region_forward == Time::ns(37500));
  CHECK(f.host.compiled_region_backward == Time::ns(22500));
  // Eager torchtitan: the per-op cost per kernel and the layer's host-only ops.
  const auto eager_sc = titan(false);
  const auto e = strat::transformer_layer_program(eager_sc, costs);
  const auto& ef = eager_sc.training.framework;
  CHECK(total(strat::step_host_costs(e.forward, fwd, ef, launch)) ==
        (ef.host.forward_op + launch) * 21 + ef.host.host_only_op * ef.counts.layer_host_only_ops);
}

TEST_CASE("the parser: training.framework.compile, every problem with its path") {
  const std::string head = R"({"model": "llama3-8b", "cluster": "dgx-h100",
      "training": {"global_batch": 16, "attention": "flash", "framework": )";
  const std::string tail = R"(}, "parallel": {"dp": 8}})";
  const auto on = strat::parse_scenario(
      head + R"({"preset": "torchtitan", "compile": true})" + tail, "on.json");
  CHECK(on.training.framework.compile.enabled);
  CHECK(on.training.framework.compile.model);
  const auto loss_only = strat::parse_scenario(
      head + R"({"preset": "torchtitan", "compile": {"enable": true, "components": ["loss"]}})" +
          tail,
      "loss.json");
  CHECK(loss_only.training.framework.compile.enabled);
  CHECK_FALSE(loss_only.training.framework.compile.compiles_blocks());
  const auto megatron =
      test::problems_of(head + R"({"preset": "megatron-lm", "compile": true})" + tail);
  CHECK(test::has_problem(megatron, "/training/framework/compile", "torchtitan's block"));
  const auto bad = test::problems_of(
      head +
      R"({"preset": "torchtitan", "compile": {"enable": "yes", "components": ["model", "gpu"]}})" +
      tail);
  CHECK(test::has_problem(bad, "/training/framework/compile/enable", ""));
  CHECK(
      test::has_problem(bad, "/training/framework/compile/components/1", "\"model\" or \"loss\""));
  const auto number = test::problems_of(head + R"({"preset": "torchtitan", "compile": 3})" + tail);
  CHECK(test::has_problem(number, "/training/framework/compile", "expected true, false"));
  // Context parallelism compiles (torchtitan's CP runs under compile); TSP does not.
  CHECK_NOTHROW(strat::parse_scenario(
      head + R"({"preset": "torchtitan", "compile": true}}, "parallel": {"dp": 4, "cp": 2}})",
      "cp.json"));
}

TEST_CASE("context parallelism in torchtitan's block: the ring replaces the core, compiled too") {
  auto with_cp = [](bool compile, int cp) {
    auto sc = titan(compile);
    sc.model.seq_len = 8192;
    sc.parallel.cp = cp;
    sc.parallel.cp_comm = strat::CpComm::kRing;
    return sc;
  };
  const cost::CostModel costs(with_cp(false, 1).cluster);
  auto program = [&](bool compile, int cp) {
    return strat::transformer_layer_program(with_cp(compile, cp), costs);
  };
  const auto eager1 = program(false, 1), eager2 = program(false, 2);
  const auto comp1 = program(true, 1), comp2 = program(true, 2);
  // Only the attention core changes with cp: the same kernel difference in both forms.
  CHECK(kernels(comp2.forward) - kernels(comp1.forward) ==
        kernels(eager2.forward) - kernels(eager1.forward));
  CHECK(kernels(comp2.backward) - kernels(comp1.backward) ==
        kernels(eager2.backward) - kernels(eager1.backward));
  // The block's own fused kernels stay: compiled has fewer kernels than eager under cp too.
  CHECK(kernels(comp2.forward) < kernels(eager2.forward));
  // The ring: cp - 1 K/V transfers forward.
  int transfers = 0;
  for (const auto& s : comp2.forward) {
    transfers += s.is_collective && s.collective.kind == cost::CollectiveKind::kSendRecv;
  }
  CHECK(transfers == 1);
  CHECK(test::simulate_report(with_cp(true, 2)).step_time_s <
        test::simulate_report(with_cp(false, 2)).step_time_s);
}
