// Overlap of the sequence-parallel collectives with their GEMMs (parallel.tp_comm_overlap,
// strategies/layers/tp_overlap.hpp): the chunks' bytes add up to the whole collective's, the
// chunk GEMMs cost their shapes (with userbuffers' SM margin where TE sets it), the transfers do
// not take the engine's generic overlap slowdown, an overlapped layer is faster than the serial
// one, and the parser's rules.
#include "strategies/layers/tp_overlap.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costmodel/cost_model.hpp"
#include "parser_problems.hpp"
#include "layer_steps.hpp"
#include "scenario_builder.hpp"
#include "strategies/framework/framework_presets.hpp"
#include "strategies/framework/host_plan.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/registry/scenario_rules.hpp"

using namespace parasim;
using strat::TpCommOverlap;

namespace {

constexpr int kTp = 8;

// Llama 2 70B layers (h 8192, f 28672, 64 heads, 8 K/V heads) at tp 8 with SP, 4K tokens:
// large GEMMs.
strat::Scenario scenario(TpCommOverlap mode) { return test::llama2_70b_sp(kTp, mode); }

using test::collectives;
using test::compute_step;
using Sum = test::CollectiveSum;

// b x s x h in bf16: the whole all-gather's and reduce-scatter's message (nccl-tests S).
double bsh(const strat::Scenario& sc) {
  return 1.0 * sc.model.seq_len * sc.model.hidden * 2;
}

}  // namespace

TEST_CASE("tp_comm_overlap none keeps the whole collectives") {
  const auto sc = scenario(TpCommOverlap::kNone);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  CHECK(collectives(p.forward, "attn all-gather", cost::CollectiveKind::kAllGather).bytes ==
        bsh(sc));
  CHECK(collectives(p.forward, "mlp reduce-scatter", cost::CollectiveKind::kReduceScatter).bytes ==
        bsh(sc));
  for (const auto& st : p.forward) CHECK_FALSE(st.copy_engine);
}

TEST_CASE("async-tp: tp - 1 shards of S / tp per collective, plus the local one, are S") {
  const auto sc = scenario(TpCommOverlap::kAsyncTp);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  const double shard = bsh(sc) / kTp;
  for (const char* label : {"attn qkv all-gather chunk", "attn proj reduce-scatter chunk",
                            "mlp fc1 all-gather chunk", "mlp fc2 reduce-scatter chunk"}) {
    INFO(label);
    const Sum s = collectives(p.forward, label, cost::CollectiveKind::kSendRecv);
    CHECK(s.count == kTp - 1);
    CHECK(s.bytes + shard == bsh(sc));  // exact: powers of two
  }
  for (const char* label :
       {"attn proj dgrad all-gather chunk", "attn qkv dgrad reduce-scatter chunk",
        "mlp fc2 dgrad all-gather chunk", "mlp fc1 dgrad reduce-scatter chunk"}) {
    INFO(label);
    const Sum s = collectives(p.backward, label, cost::CollectiveKind::kSendRecv);
    CHECK(s.count == kTp - 1);
    CHECK(s.bytes + shard == bsh(sc));
  }
  // No whole TP collective is left, and every chunk transfer is a copy engine's.
  int transfers = 0;
  for (const auto& st : p.forward) {
    if (!st.is_collective) continue;
    CHECK(st.copy_engine);
    CHECK(st.collective.kind == cost::CollectiveKind::kSendRecv);
    ++transfers;
  }
  CHECK(transfers == 4 * (kTp - 1));
  // The chunk GEMMs: tp of them per linear, each the [s / tp x n x k] GEMM at full SM count.
  const strat::LayerStep* qkv = compute_step(p.forward, "attn qkv chunk");
  REQUIRE(qkv != nullptr);
  const double n = (sc.model.heads + 2.0 * sc.model.kv_heads) * sc.model.head_dim() / kTp;
  const cost::GemmShape shape{sc.model.seq_len / kTp, static_cast<std::int64_t>(n), sc.model.hidden,
                              1, sc.training.precision};
  CHECK(qkv->compute.kernels == 1);
  CHECK(qkv->compute.time == costs.gemm_body(shape) + strat::queued_kernel_gap(costs.device()));
}

TEST_CASE("userbuffers: 4 pipelined reduce-scatters of S / 4, the ring's tp - 1 shards, bulk") {
  const auto sc = scenario(TpCommOverlap::kUserbuffers);
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  const Sum rs = collectives(p.forward, "attn proj reduce-scatter chunk",
                             cost::CollectiveKind::kReduceScatter);
  CHECK(rs.count == strat::detail::kUbPipelineSplits);
  CHECK(rs.bytes == bsh(sc));
  const Sum ring =
      collectives(p.forward, "mlp fc1 all-gather chunk", cost::CollectiveKind::kSendRecv);
  CHECK(ring.count == kTp - 1);
  CHECK(ring.bytes + bsh(sc) / kTp == bsh(sc));
  // Backward: the bulk all-gather of the input and reduce-scatter of dX, whole, beside the GEMMs.
  CHECK(
      collectives(p.backward, "attn qkv bulk all-gather", cost::CollectiveKind::kAllGather).bytes ==
      bsh(sc));
  CHECK(collectives(p.backward, "mlp fc1 bulk reduce-scatter", cost::CollectiveKind::kReduceScatter)
            .bytes == bsh(sc));

  // The SM margin: 16 of the H100's 132 SMs, so the pipelined and bulk GEMMs take 132 / 116.
  REQUIRE(sc.cluster.device.sm_count == 132);
  const double slow = strat::detail::sm_margin_slowdown(132, 16);
  CHECK(slow == doctest::Approx(132.0 / 116.0).epsilon(1e-15));
  const strat::LayerStep* fc2 = compute_step(p.forward, "mlp fc2 chunk");
  REQUIRE(fc2 != nullptr);
  const cost::GemmShape fc2_shape{sc.model.seq_len / 4, sc.model.hidden, sc.model.ffn_hidden / kTp,
                                  1, sc.training.precision};
  const sim::Time body = costs.gemm_body(fc2_shape);
  CHECK(fc2->compute.time == sim::Time::ps_rounded(static_cast<double>(body.picoseconds()) * slow) +
                                 strat::queued_kernel_gap(costs.device()));
  // The ring's chunks keep every SM (set_sm_margin false).
  const strat::LayerStep* fc1 = compute_step(p.forward, "mlp fc1 chunk");
  REQUIRE(fc1 != nullptr);
  const cost::GemmShape fc1_shape{sc.model.seq_len / kTp, 2 * sc.model.ffn_hidden / kTp,
                                  sc.model.hidden, 1, sc.training.precision};
  CHECK(fc1->compute.time == costs.gemm_body(fc1_shape) + strat::queued_kernel_gap(costs.device()));
}

TEST_CASE("overlap makes a layer with large GEMMs faster than the serial one") {
  const auto none = test::simulate_report(scenario(TpCommOverlap::kNone));
  const auto async_tp = test::simulate_report(scenario(TpCommOverlap::kAsyncTp));
  const auto ub = test::simulate_report(scenario(TpCommOverlap::kUserbuffers));
  CHECK(async_tp.step_time_s < none.step_time_s);
  CHECK(ub.step_time_s < none.step_time_s);
  // The same FLOPs either way, chunked or not (bulk's extra transfer moves bytes, no FLOPs).
  CHECK(async_tp.model_flops_per_step == doctest::Approx(none.model_flops_per_step).epsilon(1e-12));
  CHECK(ub.model_flops_per_step == doctest::Approx(none.model_flops_per_step).epsilon(1e-12));
  // The full simulation gives the symmetric one's time.
  CHECK(test::simulate_report(scenario(TpCommOverlap::kUserbuffers), true).step_time_s ==
        ub.step_time_s);
}

TEST_CASE("the margin slows the userbuffers GEMMs: without it the step is faster still") {
  auto sc = scenario(TpCommOverlap::kUserbuffers);
  const double with_margin = test::simulate_report(sc).step_time_s;
  sc.cluster.device.sm_count = 0;  // unknown SM count: sm_margin_slowdown gives 1
  CHECK(strat::detail::sm_margin_slowdown(0, 16) == 1.0);
  CHECK(test::simulate_report(sc).step_time_s < with_margin);
}

TEST_CASE("tp_comm_overlap's rules: every problem at its path") {
  const std::string text = R"({"model": {"preset": "llama3-8b", "seq_len": 8192},
      "cluster": "dgx-h100", "training": {"global_batch": 8, "micro_batch": 1,
      "attention": "flash", "framework": "megatron-lm"},
      "parallel": {"dp": 2, "tp": 1, "cp": 4, "tp_comm_overlap": "async-tp"}})";
  const auto problems = test::problems_of(text);
  CHECK(test::has_problem(problems, "/parallel/tp", "needs tp > 1"));
  CHECK(test::has_problem(problems, "/parallel/sequence_parallel", "needs sequence_parallel"));
  // async-tp is torch's: any framework may model it (torchtitan offers it; the exports say so).
  CHECK_FALSE(test::has_problem(problems, "/training/framework", ""));
  CHECK(test::has_problem(problems, "/parallel/cp", "torchtitan's block only"));

  const std::string ub = R"({"model": "llama3-8b", "cluster": "dgx-h100",
      "training": {"global_batch": 8, "micro_batch": 1, "framework": "torchtitan"},
      "parallel": {"dp": 1, "tp": 8, "sequence_parallel": true, "tp_comm_overlap": "userbuffers"}})";
  CHECK(test::has_problem(test::problems_of(ub), "/training/framework", "--tp-comm-overlap"));

  const std::string bad = R"({"model": "llama3-8b", "cluster": "dgx-h100",
      "training": {"global_batch": 8}, "parallel": {"tp_comm_overlap": "overlap"}})";
  CHECK(test::has_problem(test::problems_of(bad), "/parallel/tp_comm_overlap", "userbuffers"));
}

TEST_CASE("async-tp in torchtitan's compiled block: its GEMMs chunked, the same bytes") {
  auto sc = scenario(TpCommOverlap::kAsyncTp);
  sc.training.framework = strat::find_framework_preset("torchtitan")->spec;
  sc.training.framework.compile.enabled = true;
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  const double shard = bsh(sc) / kTp;
  // Forward: wqkv and w1 + w3 (one fused_all_gather_matmul) gather their input in tp - 1 peer
  // copies beside the local shard; wo and w2 reduce-scatter their output the same way.
  for (const char* label : {"attn wqkv all-gather chunk", "attn wo reduce-scatter chunk",
                            "mlp w1 w3 all-gather chunk", "mlp w2 reduce-scatter chunk"}) {
    INFO(label);
    const Sum s = collectives(p.forward, label, cost::CollectiveKind::kSendRecv);
    CHECK(s.count == kTp - 1);
    CHECK(s.bytes + shard == bsh(sc));
  }
  for (const char* label :
       {"attn wo dgrad all-gather chunk", "attn wqkv dgrad reduce-scatter chunk",
        "mlp w2 dgrad all-gather chunk", "mlp w1 w3 dgrad reduce-scatter chunk"}) {
    INFO(label);
    const Sum s = collectives(p.backward, label, cost::CollectiveKind::kSendRecv);
    CHECK(s.count == kTp - 1);
    CHECK(s.bytes + shard == bsh(sc));
  }
  for (const auto& st : p.forward) {
    if (st.is_collective) CHECK(st.copy_engine);  // no whole collective left
  }
  // The w1 + w3 chunk: [s / tp x 2 f / tp x h], the two weights' GEMMs at one shape.
  const strat::LayerStep* w13 = compute_step(p.forward, "mlp w1 w3 chunk");
  REQUIRE(w13 != nullptr);
  const cost::GemmShape shape{sc.model.seq_len / kTp, 2 * sc.model.ffn_hidden / kTp,
                              sc.model.hidden, 1, sc.training.precision};
  CHECK(w13->compute.time == costs.gemm_body(shape) + strat::queued_kernel_gap(costs.device()));
  // Faster than the same compiled block without the overlap.
  auto serial = sc;
  serial.parallel.tp_comm_overlap = TpCommOverlap::kNone;
  CHECK(test::simulate_report(sc).step_time_s < test::simulate_report(serial).step_time_s);
}

TEST_CASE("async-tp with context parallelism in torchtitan's block: chunks around the ring") {
  auto sc = scenario(TpCommOverlap::kAsyncTp);
  sc.training.framework = strat::find_framework_preset("torchtitan")->spec;
  sc.training.framework.compile.enabled = true;
  sc.model.seq_len = 8192;
  sc.parallel.cp = 2;
  sc.parallel.cp_comm = strat::CpComm::kRing;
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs);
  const double shard = bsh(sc) / 2 / kTp;  // this rank's s / cp tokens
  for (const char* label : {"attn wqkv all-gather chunk", "attn wo reduce-scatter chunk"}) {
    INFO(label);
    const Sum s = collectives(p.forward, label, cost::CollectiveKind::kSendRecv);
    CHECK(s.count == kTp - 1);
    CHECK(s.bytes + shard == bsh(sc) / 2);
  }
  // The ring's one K/V transfer (cp - 1) sits between them; no whole TP collective is left.
  int ring = 0;
  for (const auto& st : p.forward) {
    if (!st.is_collective) continue;
    ring += !st.copy_engine;
    CHECK(st.collective.kind == cost::CollectiveKind::kSendRecv);
  }
  CHECK(ring == 1);
  auto serial = sc;
  serial.parallel.tp_comm_overlap = TpCommOverlap::kNone;
  CHECK(test::simulate_report(sc).step_time_s < test::simulate_report(serial).step_time_s);
  // Megatron's layer keeps refusing it, and userbuffers with cp.
  auto megatron = sc;
  megatron.training.framework = strat::find_framework_preset("megatron-lm")->spec;
  megatron.training.framework.compile.enabled = false;  // only cp is left to refuse
  cost::Diagnostics d("x.json");
  strat::check_scenario(megatron, d);
  CHECK_FALSE(d.ok());
}

TEST_CASE("async-tp with torchtitan's block needs torch.compile, as torchtitan does") {
  const std::string eager = R"({"model": "llama3-8b", "cluster": "dgx-h100",
      "training": {"global_batch": 8, "micro_batch": 1, "attention": "flash",
                   "framework": "torchtitan"},
      "parallel": {"dp": 1, "tp": 8, "sequence_parallel": true, "tp_comm_overlap": "async-tp"}})";
  CHECK(test::has_problem(test::problems_of(eager), "/training/framework/compile",
                          "compile.enable"));
  const std::string compiled = R"({"model": "llama3-8b", "cluster": "dgx-h100",
      "training": {"global_batch": 8, "micro_batch": 1, "attention": "flash",
                   "framework": {"preset": "torchtitan", "compile": true}},
      "parallel": {"dp": 1, "tp": 8, "sequence_parallel": true, "tp_comm_overlap": "async-tp"}})";
  CHECK_NOTHROW(strat::parse_scenario(compiled, "compiled.json"));
}

TEST_CASE("userbuffers' buffers: 12 of [s b, h] outside the allocator, FP8 all-gather ones in bytes") {
  auto sc = scenario(TpCommOverlap::kUserbuffers);
  const double sbh = 1.0 * sc.model.seq_len * sc.training.micro_batch * sc.model.hidden;
  CHECK(strat::detail::userbuffers_bytes(sc) == 12 * sbh * 2);
  sc.training.fp8.recipe = cost::QuantRecipe::kDelayed;
  CHECK(strat::detail::userbuffers_bytes(sc) == 8 * sbh + 4 * sbh * 2);
  // FP8 with bf16 first/last layers: Megatron adds a 16-bit set.
  sc.training.fp8.bf16_layers_at_start = 1;
  CHECK(strat::detail::userbuffers_bytes(sc) == 8 * sbh + 4 * sbh * 2 + 12 * sbh * 2);
  CHECK(strat::detail::userbuffers_bytes(scenario(TpCommOverlap::kAsyncTp)) == 0);
  CHECK(strat::detail::userbuffers_bytes(scenario(TpCommOverlap::kNone)) == 0);
  // In the report: beside the CUDA context and NCCL's buffers, counted in the device's memory.
  const auto ub = test::simulate_report(scenario(TpCommOverlap::kUserbuffers));
  const auto none = test::simulate_report(scenario(TpCommOverlap::kNone));
  REQUIRE(!ub.memory.empty());
  CHECK(ub.memory[0].userbuffer_bytes == 12 * sbh * 2);
  CHECK(none.memory[0].userbuffer_bytes == 0);
  CHECK(ub.memory[0].device_bytes - ub.memory[0].peak_bytes -
            (none.memory[0].device_bytes - none.memory[0].peak_bytes) ==
        doctest::Approx(12 * sbh * 2).epsilon(1e-12));
}
