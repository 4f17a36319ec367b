#include "costmodel/kernel_presets.hpp"

#include <doctest/doctest.h>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/hardware.hpp"

namespace parasim::cost {

TEST_CASE("every preset device carries calibrated kernel efficiencies with a source per field") {
  for (const ClusterPreset& p : cluster_presets()) {
    CAPTURE(p.name);
    const KernelEfficiency& k = p.spec.device.kernels;
    CHECK(k.calibrated);
    CHECK_NOTHROW(validate(k));
    const KernelEfficiencySources& s = p.kernel_sources;
    for (const std::string* text :
         {&s.gemm_ceiling_bf16, &s.gemm_ceiling_fp16, &s.gemm_ceiling_tf32, &s.gemm_ceiling_fp32,
          &s.gemm_ceiling_fp8, &s.gemm_k_half, &s.min_gemm_body, &s.memory_streaming, &s.flash}) {
      CHECK(text->size() > 20);
    }
    // Sustained rates are below the burst maxima every source reports (at most ~0.87 of peak).
    CHECK(k.gemm_ceiling_bf16 < 0.87);
    CHECK(k.memory_streaming < 0.9);
  }
}

TEST_CASE("A100 kernel efficiencies are the published figures over the datasheet peaks") {
  const KernelEfficiency& a100 = find_cluster_preset("dgx-a100-80gb")->spec.device.kernels;
  CHECK(a100.gemm_ceiling_bf16 == 256.5 / 312.0);
  CHECK(a100.gemm_ceiling_fp16 == 256.5 / 312.0);
  CHECK(a100.gemm_ceiling_tf32 == 256.5 / 312.0);
  CHECK(a100.gemm_k_half == 256);
  CHECK(a100.min_gemm_body == sim::Time::us(5));
  CHECK(a100.memory_streaming == (1.61 + 1.61 + 1.70 + 1.70) / 4.0 / 2.039);
  CHECK(a100.flash.efficiency(FlashPass::kForward, 64, 512) == 88.0 / 312.0);
  CHECK(a100.flash.efficiency(FlashPass::kBackward, 128, 16384) == 189.0 / 312.0);
  CHECK(find_cluster_preset("perlmutter-a100")->spec.device.kernels == a100);

  const KernelEfficiency& a100_40 = find_cluster_preset("dgx-a100-40gb")->spec.device.kernels;
  CHECK(a100_40.memory_streaming == 1355.0 / 1555.0);
  CHECK(a100_40.flash == a100.flash);
  CHECK(a100_40.gemm_ceiling_bf16 == a100.gemm_ceiling_bf16);
}

TEST_CASE("Hopper, Blackwell and MI300X kernel efficiencies") {
  const KernelEfficiency& h100 = find_cluster_preset("dgx-h100")->spec.device.kernels;
  const KernelEfficiency& h200 = find_cluster_preset("hgx-h200")->spec.device.kernels;
  CHECK(h100.gemm_ceiling_bf16 == 708.5 / 989.4);
  CHECK(h200.gemm_ceiling_bf16 == h100.gemm_ceiling_bf16);  // same die, same power limit
  CHECK(h100.gemm_ceiling_fp8 == 1382.2 / 1978.9);
  CHECK(h200.gemm_ceiling_fp8 == 1288.7 / 1978.9);
  CHECK(h100.memory_streaming == (2.90 + 2.97 + 2.97) / 3.0 / 3.35);
  CHECK(h200.memory_streaming == (4.01 + 4.15 + 4.15) / 3.0 / 4.8);
  CHECK(h100.flash == h200.flash);
  CHECK(h100.flash.efficiency(FlashPass::kForward, 128, 8192) == 308.0 / 989.4);

  const ClusterPreset* b200 = find_cluster_preset("dgx-b200");
  REQUIRE(b200 != nullptr);
  const DeviceSpec& b = b200->spec.device;
  CHECK(b.peak_bf16.flop_per_s == 2250e12);
  CHECK(b.peak_fp8.flop_per_s == 4500e12);
  CHECK(b.hbm_bandwidth.bytes_per_s == 8000e9);
  CHECK(b.hbm_capacity.value == 180e9);
  CHECK(b.sm_count == 148);
  CHECK(b200->spec.intra_node.bandwidth.bytes_per_s == 900e9);
  CHECK(b200->spec.inter_node.bandwidth.bytes_per_s == 50e9);
  CHECK(b.kernels.gemm_ceiling_bf16 == 1456.3 / 2250.0);
  CHECK(b.kernels.gemm_ceiling_fp8 == 2795.7 / 4500.0);
  CHECK(b.kernels.gemm_k_half == 512);
  CHECK(b.kernels.memory_streaming == 6389.0 / 8000.0);  // GB200's measured stream
  // FlashAttention-4's kernel benchmark (d 128, 8k): one point, constant elsewhere.
  CHECK(b.kernels.flash.efficiency(FlashPass::kForward, 64, 1024) == 1418.1 / 2250.0);
  CHECK(b.kernels.flash.efficiency(FlashPass::kBackward, 128, 8192) == 1208.6 / 2250.0);

  const KernelEfficiency& mi = find_cluster_preset("mi300x-8x")->spec.device.kernels;
  CHECK(mi.gemm_ceiling_bf16 == 668.4 / 1307.4);
  CHECK(mi.min_gemm_body == sim::Time::us(4.5));
  CHECK(mi.memory_streaming == (4.11 + 4.26 + 4.14 + 4.09) / 4.0 / 5.3);
}

}  // namespace parasim::cost
