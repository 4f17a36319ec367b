#include "costmodel/kernel_efficiency.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "costmodel/hardware.hpp"

namespace parasim::cost {
namespace {

FlashAttentionTable two_by_three() {
  FlashAttentionTable t;
  t.head_dims = {64, 128};
  t.seq_lens = {512, 2048, 8192};
  t.forward = {0.2, 0.4, 0.5, 0.3, 0.6, 0.7};
  t.backward = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  return t;
}

}  // namespace

TEST_CASE("FlashAttention table: exact at grid points, forward and backward apart") {
  const FlashAttentionTable t = two_by_three();
  CHECK(t.efficiency(FlashPass::kForward, 64, 512) == 0.2);
  CHECK(t.efficiency(FlashPass::kForward, 128, 2048) == 0.6);
  CHECK(t.efficiency(FlashPass::kForward, 128, 8192) == 0.7);
  CHECK(t.efficiency(FlashPass::kBackward, 64, 8192) == 0.3);
  CHECK(t.efficiency(FlashPass::kBackward, 128, 512) == 0.4);
}

TEST_CASE("FlashAttention table: linear in ln s and ln d between grid points") {
  const FlashAttentionTable t = two_by_three();
  // 1024 is the log-midpoint of 512 and 2048: the mean of 0.2 and 0.4.
  CHECK(t.efficiency(FlashPass::kForward, 64, 1024) == doctest::Approx(0.3).epsilon(1e-14));
  // A quarter of the way in ln s from 2048 to 8192 (2048 * 4^0.25 = 2896.3...).
  const double s = 2048 * std::pow(4.0, 0.25);
  CHECK(t.efficiency(FlashPass::kForward, 64, s) ==
        doctest::Approx(0.4 * 0.75 + 0.5 * 0.25).epsilon(1e-14));
  // d = 64 * sqrt(2) is the log-midpoint of 64 and 128; with s = 1024 the bilinear mean of the
  // four corners 0.2, 0.4, 0.3, 0.6.
  CHECK(t.efficiency(FlashPass::kForward, 64 * std::sqrt(2.0), 1024) ==
        doctest::Approx((0.2 + 0.4 + 0.3 + 0.6) / 4).epsilon(1e-14));
  CHECK(t.efficiency(FlashPass::kBackward, 96, 2048) ==
        doctest::Approx(0.2 + (0.5 - 0.2) * std::log(96.0 / 64) / std::log(2.0)).epsilon(1e-14));
}

TEST_CASE("FlashAttention table: the nearest edge value outside the grid, constants on one point") {
  const FlashAttentionTable t = two_by_three();
  CHECK(t.efficiency(FlashPass::kForward, 32, 128) == 0.2);
  CHECK(t.efficiency(FlashPass::kForward, 256, 1e6) == 0.7);
  CHECK(t.efficiency(FlashPass::kForward, 256, 512) == 0.3);
  FlashAttentionTable one;
  one.head_dims = {128};
  one.seq_lens = {8192};
  one.forward = {0.37};
  one.backward = {0.33};
  for (double d : {32.0, 128.0, 512.0}) {
    for (double s : {16.0, 8192.0, 1e6}) {
      CHECK(one.efficiency(FlashPass::kForward, d, s) == 0.37);
      CHECK(one.efficiency(FlashPass::kBackward, d, s) == 0.33);
    }
  }
}

TEST_CASE("the conservative defaults are the research report's, uncalibrated") {
  const KernelEfficiency k = conservative_kernel_efficiency();
  CHECK_FALSE(k.calibrated);
  CHECK(k.gemm_ceiling(Dtype::kBf16) == 0.65);
  CHECK(k.gemm_ceiling(Dtype::kFp16) == 0.65);
  CHECK(k.gemm_ceiling(Dtype::kTf32) == 0.63);
  CHECK(k.gemm_ceiling(Dtype::kFp32) == 0.65);
  CHECK(k.gemm_ceiling(Dtype::kFp8) == 0.60);
  CHECK(k.gemm_k_half == 512);
  CHECK(k.min_gemm_body == sim::Time::us(5));
  CHECK(k.memory_streaming == 0.77);
  CHECK(k.flash.efficiency(FlashPass::kForward, 128, 512) == 0.25);
  CHECK(k.flash.efficiency(FlashPass::kBackward, 128, 16384) == 0.35);
  CHECK_NOTHROW(validate(k));
  const std::string text = describe_conservative(k);
  CHECK(text.find("GEMM 0.65 of peak") != std::string::npos);
  CHECK(text.find("0.77 of HBM bandwidth") != std::string::npos);
  CHECK(text.find("FlashAttention 0.25-0.35") != std::string::npos);
  // A device written out field by field starts from them.
  CHECK(DeviceSpec{}.kernels == k);
}

TEST_CASE("validate names the field out of range") {
  auto fails = [](auto mutate, const char* what) {
    KernelEfficiency k = conservative_kernel_efficiency();
    mutate(k);
    try {
      validate(k);
      FAIL("expected std::invalid_argument for " << what);
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find(what) != std::string::npos);
    }
  };
  fails([](KernelEfficiency& k) { k.gemm_ceiling_fp8 = 0; }, "gemm_ceiling.fp8");
  fails([](KernelEfficiency& k) { k.gemm_ceiling_bf16 = 1.2; }, "gemm_ceiling.bf16");
  fails([](KernelEfficiency& k) { k.memory_streaming = 1.5; }, "memory_efficiency");
  fails([](KernelEfficiency& k) { k.gemm_k_half = -1; }, "gemm_k_half");
  fails([](KernelEfficiency& k) { k.flash.seq_lens = {4096, 1024}; }, "seq_lens");
  fails([](KernelEfficiency& k) { k.flash.head_dims = {}; }, "head_dims");
  fails([](KernelEfficiency& k) { k.flash.forward = {0.3}; }, "needs head_dims x seq_lens");
  fails([](KernelEfficiency& k) { k.flash.backward = {0.3, 0.0}; }, "flash efficiency");
}

}  // namespace parasim::cost
