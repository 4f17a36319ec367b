// The attention core as the framework runs it: unfused Megatron passes and FlashAttention.
#include "strategies/layers/attention_core.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "costmodel/attention_cost.hpp"
#include "scenario_builder.hpp"

using namespace parasim;
using strat::detail::MemoryPass;
using strat::detail::UnfusedAttention;

namespace {

UnfusedAttention zb_stage() {  // the Zero Bubble 1.5B stage: b 6, 24 heads, s 1024, d 96, fp16
  UnfusedAttention a;
  a.problems = 6 * 24;
  a.seq_q = a.seq_k = 1024;
  a.head_dim = 96;
  a.element_bytes = 2;
  a.sixteen_bit = true;
  a.dropout = true;
  return a;
}

std::vector<std::string> kernels(const std::vector<MemoryPass>& passes) {
  std::vector<std::string> out;
  for (const auto& p : passes) out.emplace_back(p.kernel);
  return out;
}

sim::Time block_time(const std::vector<strat::LayerStep>& steps) {
  sim::Time t;
  for (const auto& s : steps) t += s.compute.time;
  return t;
}

}  // namespace

TEST_CASE("unfused attention: Megatron's fused scale-mask-softmax, dropout and context copy") {
  const UnfusedAttention a = zb_stage();
  CHECK(strat::detail::fused_softmax_available(a));
  const double scores = 144.0 * 1024 * 1024, context = 144.0 * 1024 * 96;
  const auto forward = strat::detail::unfused_attention_passes(a, false);
  CHECK(kernels(forward) ==
        std::vector<std::string>{"scale-mask-softmax", "dropout", "context copy"});
  CHECK(forward[0].bytes == 4 * scores);   // read + write, 2 bytes each
  CHECK(forward[1].bytes == 5 * scores);   // read + write + a 1-byte mask
  CHECK(forward[2].bytes == 4 * context);  // read + write
  const auto backward = strat::detail::unfused_attention_passes(a, true);
  CHECK(kernels(backward) ==
        std::vector<std::string>{"context copy backward", "dropout backward", "softmax backward"});
  CHECK(backward[0].bytes == 4 * context);
  CHECK(backward[1].bytes == 5 * scores);  // read gradient and mask, write
  CHECK(backward[2].bytes == 6 * scores);  // read gradient and probabilities, write
}

TEST_CASE("unfused attention: outside the fused kernel's range, masked_fill then softmax") {
  UnfusedAttention a = zb_stage();
  a.seq_q = a.seq_k = 8192;  // over the kernel's 4096 keys
  CHECK_FALSE(strat::detail::fused_softmax_available(a));
  const double scores = 144.0 * 8192 * 8192;
  const auto forward = strat::detail::unfused_attention_passes(a, false);
  CHECK(kernels(forward) ==
        std::vector<std::string>{"masked fill", "softmax", "dropout", "context copy"});
  CHECK(forward[0].bytes == 4 * scores);
  CHECK(forward[1].bytes == 4 * scores);
  const auto backward = strat::detail::unfused_attention_passes(a, true);
  CHECK(kernels(backward).back() == "masked fill backward");
  CHECK(backward.back().bytes == 4 * scores);

  a = zb_stage();
  a.sixteen_bit = false;
  a.element_bytes = 4;
  CHECK_FALSE(strat::detail::fused_softmax_available(a));
  a = zb_stage();
  a.problems = 31;  // not a multiple of 4
  CHECK_FALSE(strat::detail::fused_softmax_available(a));
  a = zb_stage();
  a.seq_k = 16;
  CHECK_FALSE(strat::detail::fused_softmax_available(a));
  a = zb_stage();
  a.dropout = false;
  CHECK(kernels(strat::detail::unfused_attention_passes(a, false)) ==
        std::vector<std::string>{"scale-mask-softmax", "context copy"});
}

TEST_CASE("the unfused core's time is its two batched GEMMs plus one kernel per pass") {
  auto sc = test::small_scenario(1, 1, 1, 1, 1);
  sc.cluster = cost::find_cluster_preset("dgx-a100-80gb")->spec;
  sc.cluster.gpus_per_node = 1;
  sc.training.precision = cost::Dtype::kFp16;
  sc.model.dropout = true;
  const cost::CostModel costs(sc.cluster);
  const auto x = strat::detail::dims_of(sc);
  strat::detail::StepWriter w(costs, cost::Dtype::kFp16);
  std::vector<strat::LayerStep> out;
  strat::detail::attention_core_forward(w, x);
  w.close(out, "core");
  const std::int64_t s = sc.model.seq_len, d = sc.model.head_dim(), heads = sc.model.heads;
  // Each kernel: its body plus the GPU-side gap between queued kernels (its launch is the host's).
  const sim::Time gap = strat::queued_kernel_gap(sc.cluster.device);
  sim::Time want = costs.gemm_body({s, s, d, heads, cost::Dtype::kFp16}) +
                   costs.gemm_body({s, d, s, heads, cost::Dtype::kFp16}) + gap * 2;
  UnfusedAttention a;
  a.problems = heads;
  a.seq_q = a.seq_k = s;
  a.head_dim = d;
  a.dropout = sc.model.dropout;
  for (const auto& p : strat::detail::unfused_attention_passes(a, false)) {
    want += costs.memory_bound_body(cost::Bytes{p.bytes}) + gap;
  }
  CHECK(block_time(out) == want);
  CHECK(out.front().compute.kernels == 5);  // 2 GEMMs, softmax, dropout, context copy
}

TEST_CASE("FlashAttention is one kernel per pass at the device's measured efficiency") {
  auto sc = test::small_scenario(1, 1, 1, 1, 1);
  sc.training.attention = strat::AttentionKind::kFlash;
  const cost::CostModel costs(sc.cluster);
  const auto x = strat::detail::dims_of(sc);
  cost::AttentionShape shape;
  shape.heads = sc.model.heads;
  shape.seq_q = shape.seq_kv = sc.model.seq_len;
  shape.head_dim = sc.model.head_dim();
  shape.dtype = sc.training.precision;
  for (auto pass : {cost::FlashPass::kForward, cost::FlashPass::kBackward}) {
    strat::detail::StepWriter w(costs, sc.training.precision);
    std::vector<strat::LayerStep> out;
    if (pass == cost::FlashPass::kForward) {
      strat::detail::attention_core_forward(w, x);
    } else {
      strat::detail::attention_core_backward(w, x);
    }
    w.close(out, "core");
    REQUIRE(out.size() == 1);
    CHECK(out[0].compute.kernels == 1);
    CHECK(out[0].compute.time == cost::flash_attention_time(shape, pass, sc.cluster.device) +
                                     strat::queued_kernel_gap(sc.cluster.device));
    CHECK(out[0].compute.flops.value == cost::flash_attention_flops(shape, pass).value);
  }
}
