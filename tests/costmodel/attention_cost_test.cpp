#include "costmodel/attention_cost.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "costmodel/cluster_presets.hpp"

namespace parasim::cost {

TEST_CASE("FlashAttention FLOPs as the FlashAttention papers count them") {
  AttentionShape s;
  s.heads = 6 * 24;
  s.seq_q = 1024;
  s.seq_kv = 1024;
  s.head_dim = 96;
  s.causal = true;
  const double forward = 4.0 * 144 * 1024 * 1024 * 96 / 2;
  CHECK(flash_attention_flops(s, FlashPass::kForward).value == forward);
  CHECK(flash_attention_flops(s, FlashPass::kBackward).value == 2.5 * forward);
  s.causal = false;
  CHECK(flash_attention_flops(s, FlashPass::kForward).value == 2 * forward);
  s.seq_q = 256;  // fewer queries than keys (TSP's local queries)
  CHECK(flash_attention_flops(s, FlashPass::kForward).value == 2 * forward / 4);
  s.head_dim = 0;
  CHECK_THROWS_AS(flash_attention_flops(s, FlashPass::kForward), std::invalid_argument);
}

TEST_CASE("FlashAttention time = FLOPs / (peak x the device's measured efficiency)") {
  const DeviceSpec a100 = find_cluster_preset("dgx-a100-80gb")->spec.device;
  AttentionShape s;
  s.heads = 32;
  s.seq_q = s.seq_kv = 2048;
  s.head_dim = 128;
  s.dtype = Dtype::kFp16;
  const double eff = 155.0 / 312.0;  // FA2 causal f+b, d 128, s 2k
  for (FlashPass pass : {FlashPass::kForward, FlashPass::kBackward}) {
    const double want = flash_attention_flops(s, pass).value / (312e12 * eff);
    const double got = flash_attention_time(s, pass, a100).to_seconds();
    CHECK(std::abs(got - want) <= 0.5e-12);
  }
  // Fwd + bwd together run at the measured combined rate: 3.5 x fwd FLOPs at 155 TFLOP/s.
  const double both = flash_attention_time(s, FlashPass::kForward, a100).to_seconds() +
                      flash_attention_time(s, FlashPass::kBackward, a100).to_seconds();
  CHECK(3.5 * flash_attention_flops(s, FlashPass::kForward).value / both ==
        doctest::Approx(155e12).epsilon(1e-9));
  s.dtype = Dtype::kFp8;
  CHECK_THROWS_AS(flash_attention_time(s, FlashPass::kForward, a100), std::invalid_argument);
}

}  // namespace parasim::cost
