// Mixture-of-experts layers (issue 27): the all-to-all's bytes per rank exactly, an MoE layer of
// one expert against the dense layer, what the router's imbalance costs, symmetric against full,
// and the memory of the experts' weights and optimizer state by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "costmodel/cost_model.hpp"
#include "costmodel/expert_load.hpp"
#include "report/step_report.hpp"
#include "parser_problems.hpp"
#include "scenario_builder.hpp"
#include "costmodel/token_exchange.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/layers/layer_kernels.hpp"
#include "strategies/layers/moe_layer.hpp"
#include "strategies/registry/registry.hpp"
#include "strategies/workload/workload_builder.hpp"

using namespace parasim;

namespace {

// Llama-2-7B-shaped layers with 8 experts of 4096, top-2, on dp x tp GPUs of one node.
strat::Scenario moe_scenario(int dp, int tp, int ep, double max_violation = -1) {
  auto sc = test::small_scenario(dp, tp, 1, 4 * dp, 1);
  sc.model.moe.experts = 8;
  sc.model.moe.top_k = 2;
  sc.model.moe.expert_ffn_hidden = 4096;
  sc.model.moe.max_violation = max_violation;
  sc.parallel.ep = ep;
  sc.parallel.sequence_parallel = tp > 1;
  sc.training.attention = strat::AttentionKind::kFlash;
  return sc;
}

double group_bytes(const std::vector<strat::LayerStep>& steps, strat::StepGroup group,
                   cost::CollectiveKind kind) {
  double bytes = 0;
  for (const auto& s : steps) {
    if (s.is_collective && s.group == group && s.collective.kind == kind) {
      bytes += s.collective.message.value;
    }
  }
  return bytes;
}

double compute_time_s(const std::vector<strat::LayerStep>& steps, const char* label) {
  double t = 0;
  for (const auto& s : steps) {
    if (!s.is_collective && s.compute.label == label) t += s.compute.time.to_seconds();
  }
  return t;
}

strat::ModelSpec plain_model(strat::ModelSpec m) {
  m.qk_norm = strat::QkNorm::kNone;
  return m;
}

}  // namespace

TEST_CASE("the dispatch all-to-all moves T k h e bytes per rank, times the busiest rank's load") {
  for (int ep : {2, 4, 8}) {
    for (double skew : {0.0, 0.52}) {
      CAPTURE(ep);
      CAPTURE(skew);
      const auto sc = moe_scenario(8, 1, ep, skew);
      const cost::CostModel costs(sc.cluster);
      const auto p = strat::transformer_layer_program(sc, costs, strat::LayerKind::kMoe);
      const double T = sc.model.seq_len, k = 2, h = sc.model.hidden, e = 2;
      const double R = cost::expert_load({8, 2, ep, T, skew, 0.0}).rank_factor;  // the busiest rank
      // Dispatch and combine: the all-to-all's message S is what each rank sends in all.
      const double a2a = group_bytes(p.forward, strat::StepGroup::kExpertParallel,
                                     cost::CollectiveKind::kAllToAll);
      // dispatch and combine of the hidden states, and the probabilities (fp32) one way.
      CHECK(a2a == doctest::Approx(2 * T * k * h * e * R + 4 * T * k * R).epsilon(1e-12));
      // Per rank on the wire: (ep - 1) / ep of it leaves the GPU.
      const auto plan = costs.collective(cost::CollectiveKind::kAllToAll,
                                         cost::Bytes{T * k * h * e}, {ep, ep, 1});
      double sent = 0;
      for (const auto& ph : plan.phases) sent += ph.bytes_sent_per_rank.value;
      CHECK(sent == doctest::Approx(T * k * h * e * (ep - 1.0) / ep).epsilon(1e-12));
      // The backward sends the gradients the same way.
      CHECK(group_bytes(p.backward, strat::StepGroup::kExpertParallel,
                        cost::CollectiveKind::kAllToAll) ==
            doctest::Approx(2 * T * k * h * e * R).epsilon(1e-12));
    }
  }
}

TEST_CASE("one expert of the dense width, top-1, ep 1: the dense layer's GEMMs plus the router") {
  auto moe = test::small_scenario(1, 1, 1, 4, 1);
  moe.model.moe.experts = 1;
  moe.model.moe.top_k = 1;
  moe.model.moe.expert_ffn_hidden = moe.model.ffn_hidden;
  const cost::CostModel costs(moe.cluster);
  const auto dense = strat::transformer_layer_program(moe, costs, strat::LayerKind::kDense);
  const auto one = strat::transformer_layer_program(moe, costs, strat::LayerKind::kMoe);
  const double T = moe.model.seq_len, h = moe.model.hidden;
  // FLOPs: the dense layer's and the router's h x 1 GEMM, forward and backward.
  CHECK(one.model_flops.value ==
        doctest::Approx(dense.model_flops.value + 3 * 2 * T * h * 1).epsilon(1e-12));
  // The expert GEMMs are the dense MLP's: a grouped GEMM of one group is that GEMM.
  const double f = moe.model.ffn_hidden;
  const double dense_mlp = costs
                               .gemm(cost::GemmShape{std::llround(T), std::llround(2 * f),
                                                     std::llround(h), 1, cost::Dtype::kBf16})
                               .to_seconds() +
                           costs
                               .gemm(cost::GemmShape{std::llround(T), std::llround(h),
                                                     std::llround(f), 1, cost::Dtype::kBf16})
                               .to_seconds();
  CHECK(compute_time_s(one.forward, "experts") > dense_mlp);  // + permute, SwiGLU, unpermute
  // No expert collectives: one rank holds the one expert.
  for (const auto& s : one.forward) {
    CHECK_FALSE((s.is_collective && s.group == strat::StepGroup::kExpertParallel));
  }
  // And the step: the dense one plus the routing kernels, never less.
  strat::Scenario plain = moe;
  plain.model.moe = strat::MoeSpec{};
  const auto dense_step = test::simulate_report(plain);
  const auto moe_step = test::simulate_report(moe);
  CHECK(moe_step.step_time_s > dense_step.step_time_s);
  CHECK(moe_step.step_time_s < dense_step.step_time_s * 1.10);
}

TEST_CASE("imbalance raises the experts' GEMM time by the busiest rank's extra tokens") {
  const auto balanced = moe_scenario(8, 1, 8, 0.0);
  const auto skewed = moe_scenario(8, 1, 8, 0.52);
  const cost::CostModel costs(balanced.cluster);
  const auto a = strat::transformer_layer_program(balanced, costs, strat::LayerKind::kMoe);
  const auto b = strat::transformer_layer_program(skewed, costs, strat::LayerKind::kMoe);
  const double T = balanced.model.seq_len, h = balanced.model.hidden, f = 4096;
  const double ra = cost::expert_load({8, 2, 8, T, 0.0, 0.0}).rank_factor;
  const double rb = cost::expert_load({8, 2, 8, T, 0.52, 0.0}).rank_factor;
  CHECK(rb > ra);
  CHECK(ra > 1);  // sampling alone leaves the busiest rank above the mean
  // The model FLOPs are the mean rank's: imbalance is time, not work.
  CHECK(a.model_flops.value == doctest::Approx(b.model_flops.value).epsilon(1e-12));
  // One local expert per rank: its two GEMMs over T k R rows.
  auto gemms = [&](double rows) {
    return costs
               .gemm(cost::GemmShape{std::llround(rows), std::llround(2 * f), std::llround(h), 1,
                                     cost::Dtype::kBf16})
               .to_seconds() +
           costs
               .gemm(cost::GemmShape{std::llround(rows), std::llround(h), std::llround(f), 1,
                                     cost::Dtype::kBf16})
               .to_seconds();
  };
  const double extra_gemm = gemms(T * 2 * rb) - gemms(T * 2 * ra);
  const double extra_memory =
      costs.memory_bound_body(cost::Bytes{(3 * 2 * f + 4) * T * 2 * (rb - ra)}).to_seconds();
  const double delta = compute_time_s(b.forward, "experts") - compute_time_s(a.forward, "experts");
  CHECK(delta > extra_gemm);
  CHECK(delta == doctest::Approx(extra_gemm + extra_memory).epsilon(0.02));
  // Attention does not change.
  CHECK(compute_time_s(a.forward, "attn") == compute_time_s(b.forward, "attn"));
}

TEST_CASE("MoE: symmetric and full simulations agree") {
  for (int ep : {2, 4}) {
    CAPTURE(ep);
    auto sc = moe_scenario(4, 2, ep, 0.2);
    const auto sym = test::simulate_report(sc, false);
    const auto full = test::simulate_report(sc, true);
    CHECK(full.step_time_s == doctest::Approx(sym.step_time_s).epsilon(1e-9));
    REQUIRE_FALSE(full.memory.empty());
    for (const auto& device : full.memory) {
      CHECK(device.peak_bytes == doctest::Approx(sym.memory.front().peak_bytes).epsilon(1e-9));
    }
  }
}

TEST_CASE("MoE memory: dense parameters over dp, local experts over edp, by hand") {
  // 16 GPUs: dp 8 x tp 2; ep 4, etp 2 -> edp = 16 / 8 = 2; ZeRO-1 (fp32 master, Adam moments).
  auto sc = moe_scenario(8, 2, 4, 0.0);
  sc.cluster.nodes = 2;
  sc.parallel.zero_stage = 1;
  const auto& m = sc.model;
  const double h = m.hidden, t = 2;
  const double attention = static_cast<double>(m.attention_params()) / t + 2 * h + h * 8;
  const double expert = 8.0 / 4 * 3 * h * 4096 / 2;  // 2 local experts, each / etp
  const double embeddings = 2 * static_cast<double>(m.vocab) * h / t + h;
  const double dense = m.layers * attention + embeddings;
  const double layers_expert = m.layers * expert;
  const auto params = strat::layers_params_on_rank(m, sc.parallel, 0, m.layers);
  CHECK(params.dense == doctest::Approx(m.layers * attention).epsilon(1e-12));
  CHECK(params.expert == doctest::Approx(layers_expert).epsilon(1e-12));
  const auto r = test::simulate_report(sc);
  const double weights = 2 * (dense + layers_expert);
  const double gradients = 2 * (dense + layers_expert);  // bf16 gradients (Megatron's default)
  const double optimizer = 12 * dense / 8 + 12 * layers_expert / 2;
  REQUIRE_FALSE(r.memory.empty());
  auto category = [&](const char* name) {
    for (const auto& [key, bytes] : r.memory.front().breakdown_bytes) {
      if (key == name) return bytes;
    }
    return -1.0;
  };
  CHECK(category("weights") == doctest::Approx(weights).epsilon(1e-6));
  CHECK(category("gradients") == doctest::Approx(gradients).epsilon(1e-6));
  CHECK(category("optimizer state") == doctest::Approx(optimizer).epsilon(1e-6));
}

TEST_CASE("query/key norms: two kernels forward, two norm backwards (3 kernels each)") {
  auto sc = test::small_scenario(1, 1, 1, 4, 1);
  const cost::CostModel costs(sc.cluster);
  auto kernels = [&](const std::vector<strat::LayerStep>& steps) {
    int n = 0;
    for (const auto& s : steps) n += s.is_collective ? 0 : s.compute.kernels;
    return n;
  };
  const auto plain = strat::transformer_layer_program(sc, costs);
  sc.model.qk_norm = strat::QkNorm::kPerHead;
  const auto normed = strat::transformer_layer_program(sc, costs);
  CHECK(kernels(normed.forward) == kernels(plain.forward) + 2);
  CHECK(kernels(normed.backward) == kernels(plain.backward) + 6);
  // Their weights: one d-wide scale for the queries and one for the keys, on every rank.
  CHECK(strat::layer_params_per_tp_rank(sc.model, 1) ==
        strat::layer_params_per_tp_rank(plain_model(sc.model), 1) + 2 * sc.model.head_dim());
}

TEST_CASE("a capacity factor caps the busiest rank and drops the rest from the model FLOPs") {
  auto dropless = moe_scenario(8, 1, 8, 0.52);
  auto capped = dropless;
  capped.model.moe.capacity_factor = 1.0;
  const cost::CostModel costs(dropless.cluster);
  const auto a = strat::transformer_layer_program(dropless, costs, strat::LayerKind::kMoe);
  const auto b = strat::transformer_layer_program(capped, costs, strat::LayerKind::kMoe);
  const double T = dropless.model.seq_len, k = 2, h = dropless.model.hidden, e = 2;
  const auto load = cost::expert_load({8, 2, 8, T, 0.52, 1.0});
  CHECK(load.rank_factor <= 1.0);
  CHECK(load.dropped_fraction > 0);
  // The all-to-all carries what the experts keep: at most their capacity.
  CHECK(group_bytes(b.forward, strat::StepGroup::kExpertParallel,
                    cost::CollectiveKind::kAllToAll) ==
        doctest::Approx(2 * T * k * h * e * load.rank_factor + 4 * T * k * load.rank_factor)
            .epsilon(1e-12));
  CHECK(b.model_flops.value < a.model_flops.value);
  CHECK(compute_time_s(b.forward, "experts") < compute_time_s(a.forward, "experts"));
}

TEST_CASE("shared experts under the dispatch: the same work, less time, nothing without them") {
  auto plain = moe_scenario(8, 1, 8, 0.04);
  plain.model.moe.shared_experts = 1;
  plain.model.moe.shared_ffn_hidden = 4096;
  auto overlapped = plain;
  overlapped.parallel.moe_shared_expert_overlap = true;
  const cost::CostModel costs(plain.cluster);
  const auto a = strat::transformer_layer_program(plain, costs, strat::LayerKind::kMoe);
  const auto b = strat::transformer_layer_program(overlapped, costs, strat::LayerKind::kMoe);
  CHECK(a.model_flops.value == doctest::Approx(b.model_flops.value).epsilon(1e-12));
  // The experts wait for the dispatch and for the shared experts, which wait for the permutation.
  int shared = -1;
  for (std::size_t i = 0; i < b.forward.size(); ++i) {
    if (!b.forward[i].is_collective && b.forward[i].compute.label == "shared experts") {
      shared = static_cast<int>(i);
    }
  }
  REQUIRE(shared >= 0);
  CHECK(b.forward[static_cast<std::size_t>(shared)].after.size() == 1);
  const auto slow = test::simulate_report(plain);
  const auto fast = test::simulate_report(overlapped);
  CHECK(fast.step_time_s < slow.step_time_s);
  // The backward too: the shared experts' backward waits for the un-permutation only, and the
  // experts' backward for it and the combine's all-to-all (their own stream in Megatron).
  int shared_bwd = -1, experts_bwd = -1;
  for (std::size_t i = 0; i < b.backward.size(); ++i) {
    const auto& st = b.backward[i];
    if (st.is_collective) continue;
    if (st.compute.label == "shared experts bwd") shared_bwd = static_cast<int>(i);
    if (st.compute.label == "experts bwd") experts_bwd = static_cast<int>(i);
  }
  REQUIRE(shared_bwd >= 0);
  REQUIRE(experts_bwd > shared_bwd);
  CHECK(b.backward[static_cast<std::size_t>(shared_bwd)].after.size() == 1);
  CHECK(b.backward[static_cast<std::size_t>(experts_bwd)].after.size() == 2);
  // Not more than the shared experts' own time per layer and micro-batch is saved.
  const double saved_per_layer =
      (slow.step_time_s - fast.step_time_s) / plain.model.layers / plain.micro_batches();
  CHECK(saved_per_layer <= (compute_time_s(a.forward, "shared experts") +
                            compute_time_s(a.backward, "shared experts bwd")) *
                               (1 + 1e-9));
}

TEST_CASE("flex (DeepEP): one dispatch and one combine each way, each token once per target rank") {
  auto sc = moe_scenario(8, 1, 8, 0.0);
  sc.parallel.moe_dispatcher = strat::MoeDispatcher::kFlex;
  const cost::CostModel costs(sc.cluster);
  const auto p = strat::transformer_layer_program(sc, costs, strat::LayerKind::kMoe);
  std::vector<const strat::LayerStep*> exchanges;
  for (const auto& s : p.forward) {
    if (s.is_collective) {
      CHECK(s.group == strat::StepGroup::kExpertGrid);
      CHECK(s.collective.exchange.has_value());
      exchanges.push_back(&s);
    }
  }
  REQUIRE(exchanges.size() == 2);  // no counts all-gather: DeepEP's notify carries the counts
  const double T = sc.model.seq_len, h = sc.model.hidden, e = 2, k = 2;
  const double R = cost::expert_load({8, 2, 8, T, 0.0, 0.0}).rank_factor;
  const auto& dispatch = *exchanges[0]->collective.exchange;
  CHECK(dispatch.bytes_per_token == h * e + k * 12);  // bf16 hidden, int64 index, fp32 weight
  CHECK(exchanges[1]->collective.exchange->bytes_per_token == h * e);
  CHECK(dispatch.rank_factor == doctest::Approx(R));
  // On one node of 8: every other target rank over NVLink, a token to a rank once whatever how
  // many of its experts it picked there: 7 x hit(1) = 7 x 2/8 of T tokens, not 7/8 of 2 T.
  const cost::GroupPlacement node{8, 8, 1};
  const auto plan = strat::plan_step(costs, exchanges[0]->collective, node);
  REQUIRE(plan.phases.size() == 1);
  CHECK(plan.phases[0].bytes_sent_per_rank.value ==
        doctest::Approx(T * R * (h * e + k * 12) * 7 * 0.25).epsilon(1e-12));
  // Two more in the backward (the combine's transpose is a dispatch, and the other way round).
  int backward = 0;
  for (const auto& s : p.backward) backward += s.is_collective && s.collective.exchange ? 1 : 0;
  CHECK(backward == 2);
  // It runs, and DeepEP's buffers are counted outside the allocator.
  const auto r = test::simulate_report(sc);
  CHECK(r.step_time_s > 0);
  REQUIRE(!r.memory.empty());
  CHECK(r.memory[0].dispatch_buffer_bytes ==
        doctest::Approx(cost::deepep_buffer_bytes(h * e, 8).value));
  auto alltoall = sc;
  alltoall.parallel.moe_dispatcher = strat::MoeDispatcher::kAllToAll;
  CHECK(test::simulate_report(alltoall).memory[0].dispatch_buffer_bytes == 0);
}

TEST_CASE("flex's rules: DeepEP's group sizes and 8 GPUs a node across nodes") {
  auto sc = moe_scenario(8, 1, 8, 0.0);
  sc.parallel.moe_dispatcher = strat::MoeDispatcher::kFlex;
  sc.model.moe.experts = 12;
  sc.parallel.ep = 6;  // DeepEP has no config for 6 ranks
  cost::Diagnostics d("flex.json");
  strat::check_entry_rules(sc, d);
  bool named = false;
  for (const auto& issue : d.problems()) {
    named = named || (issue.json_path == "/parallel/moe_dispatcher" &&
                      issue.message.find("configs for 2, 4, 8, 16") != std::string::npos);
  }
  CHECK(named);
  CHECK(cost::deepep_group_problem(16, 4).has_value());   // internode needs 8 NVLink peers
  CHECK(cost::deepep_group_problem(8, 4).has_value());    // intranode needs one node
  CHECK_FALSE(cost::deepep_group_problem(16, 8).has_value());
  CHECK_FALSE(cost::deepep_group_problem(4, 8).has_value());
}

TEST_CASE("DeepSeek-V3's layout (pp 16, ep 64, ZeRO-1, flex, MTP): a middle stage's memory by hand") {
  const auto sc = strat::load_scenario(
      (std::filesystem::path(PARASIM_SOURCE_DIR) / "scenarios/deepseek-v3-2048gpu.json").string());
  // Stage 1 holds layers 3..6 (3 / 4 x 14 / 2), all MoE. Per layer, tp 1:
  const double h = 7168, E = 256, F = 2048;
  const double mla = h * 1536 + 1536 + 1536 * 128 * (128 + 64.0) + h * (512 + 64.0) + 512 +
                     512 * 128 * (128 + 128.0) + 128 * 128 * h;
  const double dense = mla + 2 * h + (h * E + E) + 3 * h * F;  // norms, sigmoid router, shared
  const double expert = E / 64 * 3 * h * F;                     // 4 local experts
  const double dense_stage = 4 * dense, expert_stage = 4 * expert;
  // ZeRO-1: bf16 weights and gradients whole; fp32 master and two moments (12 bytes) over the
  // dense replicas (dp 128) and over the expert data-parallel ranks (edp = 128 / 64 = 2).
  const double weights = 2 * (dense_stage + expert_stage);
  const double gradients = 2 * (dense_stage + expert_stage);
  const double optimizer = 12 * dense_stage / 128 + 12 * expert_stage / 2;
  // DeepEP's buffers over 64 ranks, hidden 7168 in bf16, Megatron's 20 SMs (config.hpp hints),
  // and its workspace.
  const double per_token = 2 * h + 8 + 128 * 8 + 128 * 4 + 128 * 4;
  const double nvl = std::ceil((10 * 8 * 19 * 4 + 10 * 8 * 288 * per_token) / 128) * 128;
  const double rdma =
      std::ceil((10 * 8 * 18 * 2 * 4 + 10 * 8 * 128 * 2 * (per_token + 16) + 1048576) / 128) * 128;
  const auto r = test::simulate_report(sc);
  REQUIRE_FALSE(r.memory.empty());
  const auto* stage1 = &r.memory.front();
  bool found = false;
  for (const auto& m : r.memory) {
    if (m.stage == 1 && !found) {
      stage1 = &m;
      found = true;
    }
  }
  REQUIRE(found);
  auto category = [&](const char* name) {
    for (const auto& [key, bytes] : stage1->breakdown_bytes) {
      if (key == name) return bytes;
    }
    return -1.0;
  };
  CHECK(category("weights") == doctest::Approx(weights).epsilon(1e-6));
  CHECK(category("gradients") == doctest::Approx(gradients).epsilon(1e-6));
  CHECK(category("optimizer state") == doctest::Approx(optimizer).epsilon(1e-6));
  const double workspace = 32.0 * 1024 * 1024;  // DeepEP's Buffer workspace (deep_ep.cpp)
  CHECK(stage1->dispatch_buffer_bytes == doctest::Approx(nvl + rdma + workspace).epsilon(1e-12));
}

TEST_CASE("Megatron's moe_act and shared_experts modules: what they drop and rerun, by hand") {
  auto base = moe_scenario(8, 1, 8);
  base.model.moe.shared_experts = 1;
  base.model.moe.shared_ffn_hidden = 4096;
  base.training.recompute = cost::Recompute::kSelective;
  const cost::CostModel costs(base.cluster);
  const auto kind = strat::LayerKind::kMoe;
  const auto plain = strat::transformer_layer_program(base, costs, kind);
  auto act = base;
  act.training.recompute_modules.moe_act = true;
  const auto a = strat::transformer_layer_program(act, costs, kind);
  // moe_act: fc2's input, the busiest rank's computed tokens x expert ffn in bf16, not kept;
  // the activation kernel (3 passes of it plus the fp32 probabilities) rerun in the backward.
  const auto md = strat::detail::moe_dims_of(act);
  const double fc2_input = md.computed() * md.expert_ffn / md.etp * 2;
  CHECK(plain.activation_stored_bytes - a.activation_stored_bytes ==
        doctest::Approx(fc2_input).epsilon(1e-12));
  const auto kernels = [](const std::vector<strat::LayerStep>& steps) {
    int k = 0;
    for (const auto& st : steps) k += st.is_collective ? 0 : st.compute.kernels;
    return k;
  };
  CHECK(kernels(a.backward) == kernels(plain.backward) + 1);
  CHECK(kernels(a.forward) == kernels(plain.forward));
  // shared_experts: the shared MLP keeps only its input (the norm's output); its forward reruns
  // inside the backward, marked as recompute.
  auto shared = base;
  shared.training.recompute_modules.shared_experts = true;
  const auto sh = strat::transformer_layer_program(shared, costs, kind);
  const double tokens = shared.model.seq_len * shared.training.micro_batch;
  const double hb = tokens * shared.model.hidden * 2;
  const double sf = tokens * shared.model.moe.shared_ffn_hidden * 2;
  CHECK(plain.activation_stored_bytes - sh.activation_stored_bytes ==
        doctest::Approx((hb + 3 * sf) - hb).epsilon(1e-12));
  int rerun = 0;
  for (const auto& st : sh.backward) rerun += st.recompute && !st.is_collective;
  CHECK(rerun > 0);
  double rerun_flops = 0;
  for (const auto& st : sh.backward) rerun_flops += st.recompute ? st.compute.flops.value : 0;
  // fc1 (gate and up) and fc2 of the shared MLP: 2 x tokens x (2 f_s h + f_s h).
  CHECK(rerun_flops == doctest::Approx(2 * tokens * 3 * shared.model.moe.shared_ffn_hidden *
                                       shared.model.hidden)
                           .epsilon(1e-9));
  CHECK(test::simulate_report(shared).step_time_s > test::simulate_report(base).step_time_s);
  // Under --moe-shared-expert-overlap Megatron does not recompute them (moe_layer.py).
  auto overlapped = shared;
  overlapped.parallel.moe_shared_expert_overlap = true;
  CHECK_FALSE(strat::detail::moe_dims_of(overlapped).recompute_shared);
  // What the backward reads comes back: the full bytes are the plain layer's.
  CHECK(a.activation_full_bytes == plain.activation_full_bytes);
  CHECK(sh.activation_full_bytes == plain.activation_full_bytes);
}

TEST_CASE("Megatron's moe module: the MoE layer keeps its input, reruns its forward and exchanges") {
  auto base = moe_scenario(8, 1, 8);
  base.training.recompute = cost::Recompute::kSelective;
  const cost::CostModel costs(base.cluster);
  const auto kind = strat::LayerKind::kMoe;
  const auto plain = strat::transformer_layer_program(base, costs, kind);
  auto whole = base;
  whole.training.recompute_modules.moe = true;
  whole.training.recompute_modules.moe_act = true;  // inside the layer's checkpoint: the layer's
  const auto p = strat::transformer_layer_program(whole, costs, kind);
  const auto md = strat::detail::moe_dims_of(whole);
  CHECK(md.recompute_layer);
  CHECK_FALSE(md.recompute_act);
  const auto x = strat::detail::dims_of(whole);
  const double block = strat::detail::moe_block_activation_bytes(x, strat::detail::moe_dims_of(base));
  CHECK(plain.activation_stored_bytes - p.activation_stored_bytes ==
        doctest::Approx(block - strat::detail::hidden_bytes(x)).epsilon(1e-12));
  CHECK(p.activation_full_bytes == plain.activation_full_bytes);
  // The rerun: the layer's all-to-alls again, and the experts' GEMMs.
  int rerun_a2a = 0;
  double rerun_flops = 0;
  for (const auto& st : p.backward) {
    if (!st.recompute) continue;
    rerun_a2a += st.is_collective && st.collective.kind == cost::CollectiveKind::kAllToAll;
    rerun_flops += st.is_collective ? 0 : st.compute.flops.value;
  }
  int forward_a2a = 0;  // the dispatch's (tokens, probabilities) and the combine's
  for (const auto& st : plain.forward) {
    forward_a2a += st.is_collective && st.collective.kind == cost::CollectiveKind::kAllToAll;
  }
  CHECK(forward_a2a >= 2);
  CHECK(rerun_a2a == forward_a2a);
  double moe_forward_flops = 0;
  for (const auto& st : plain.forward) {
    if (!st.is_collective && st.compute.label != "attn") moe_forward_flops += st.compute.flops.value;
  }
  CHECK(rerun_flops > 0);
  CHECK(rerun_flops <= moe_forward_flops);
  CHECK(test::simulate_report(whole).step_time_s > test::simulate_report(base).step_time_s);
}

TEST_CASE("moe_act and shared_experts: problems at their paths") {
  const auto text = [](const std::string& model, const std::string& extra) {
    return R"({"model": )" + model + R"(, "cluster": "dgx-h100", "training": {"global_batch": 8,
      "micro_batch": 1, "attention": "flash", "recompute": "selective",
      "recompute_modules": ["core_attn", "moe_act", "shared_experts"])" + extra + R"(},
      "parallel": {"dp": 8, "ep": 8}})";
  };
  const auto dense = test::problems_of(
      R"({"model": "llama2-7b", "cluster": "dgx-h100", "training": {"global_batch": 8,
      "recompute": "selective", "recompute_modules": ["moe_act"]}, "parallel": {"dp": 8}})");
  CHECK(test::has_problem(dense, "/training/recompute_modules", "the model has none"));
  const auto mixtral = test::problems_of(text(R"("mixtral-8x7b")", ""));
  CHECK(test::has_problem(mixtral, "/training/recompute_modules", "shared experts"));
  const auto unknown = test::problems_of(
      R"({"model": "mixtral-8x7b", "cluster": "dgx-h100", "training": {"global_batch": 8,
      "recompute": "selective", "recompute_modules": ["mla_up_proj"]},
      "parallel": {"dp": 8, "ep": 8}})");
  CHECK(test::has_problem(unknown, "/training/recompute_modules", "model.mla"));
  const auto overlap = test::problems_of(
      R"({"model": "deepseek-v3", "cluster": "dgx-h100", "training": {"global_batch": 8,
      "recompute": "selective", "recompute_modules": ["shared_experts"]},
      "parallel": {"dp": 8, "ep": 8, "moe_shared_expert_overlap": true}})");
  CHECK(test::has_problem(overlap, "/training/recompute_modules", "no effect"));
}
