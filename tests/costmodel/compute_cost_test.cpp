#include "costmodel/compute_cost.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "costmodel/cluster_presets.hpp"

namespace parasim::cost {
namespace {

DeviceSpec preset_device(const char* name) {
  const ClusterPreset* p = find_cluster_preset(name);
  REQUIRE(p != nullptr);
  return p->spec.device;
}

GemmShape bf16(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch = 1) {
  return GemmShape{m, n, k, batch, Dtype::kBf16};
}

double rel_diff(double a, double b) {
  return std::fabs(a - b) / std::fabs(b);
}

// Time rounds to the nearest picosecond, so compare against an exact value in picoseconds.
bool within_a_picosecond(sim::Time t, double expected_seconds) {
  return std::fabs(static_cast<double>(t.picoseconds()) - expected_seconds * 1e12) <= 0.5 + 1e-6;
}

double seconds_per_flop(const GemmCostModel& model, const GemmShape& s) {
  return model.gemm_time(s).to_seconds() / s.flops().value;
}

}  // namespace

TEST_CASE("GemmShape counts FLOPs and minimal bytes exactly") {
  const GemmShape s = bf16(4096, 11008, 4096);
  CHECK(s.flops().value == 2.0 * 4096.0 * 11008.0 * 4096.0);
  CHECK(s.bytes().value == (4096.0 * 4096.0 + 4096.0 * 11008.0 + 4096.0 * 11008.0) * 2.0);

  const GemmShape batched{128, 64, 32, 12, Dtype::kFp32};
  CHECK(batched.flops().value == 2.0 * 128 * 64 * 32 * 12);
  CHECK(batched.bytes().value == (128.0 * 32 + 32.0 * 64 + 128.0 * 64) * 12 * 4);

  const GemmShape fp8{256, 256, 256, 1, Dtype::kFp8};
  CHECK(fp8.bytes().value == 3.0 * 256 * 256);
}

TEST_CASE("efficiency is monotone non-decreasing in k for fixed m and n") {
  DeviceSpec no_waves = preset_device("dgx-h100");
  no_waves.sm_count = 0;
  for (const DeviceSpec& device : {preset_device("dgx-h100"), preset_device("dgx-a100-80gb"),
                                   preset_device("mi300x-8x"), no_waves}) {
    const RooflineGemmModel model(device);
    for (std::int64_t m : {1, 100, 128, 4096, 5000}) {
      for (std::int64_t n : {1, 128, 1000, 8192}) {
        double previous = 0.0;
        for (std::int64_t k = 1; k <= 32768; k = k * 3 / 2 + 1) {
          const double e = model.efficiency(bf16(m, n, k));
          CHECK(e > 0.0);
          CHECK(e <= model.ceiling(Dtype::kBf16));
          CHECK(e >= previous);
          previous = e;
        }
      }
    }
  }
}

TEST_CASE("one tile past a full wave costs more per FLOP than the exact multiple") {
  const RooflineGemmModel model(preset_device("dgx-h100"));  // 132 SMs, 128x128 tiles
  // n = 1024 gives 8 tile columns; m = 33 tiles gives 264 = 2 x 132 tiles: two full waves.
  const GemmShape exact = bf16(33 * 128, 1024, 8192);
  const GemmShape one_more = bf16(34 * 128, 1024, 8192);

  const GemmEfficiencyBreakdown b_exact = model.breakdown(exact);
  const GemmEfficiencyBreakdown b_more = model.breakdown(one_more);
  CHECK(b_exact.tiles == 264);
  CHECK(b_exact.waves == 2);
  CHECK(b_exact.wave == 1.0);
  CHECK(b_more.tiles == 272);
  CHECK(b_more.waves == 3);
  CHECK(b_more.wave == doctest::Approx(272.0 / 396.0).scale(0));

  // Both shapes are compute-bound, so time per FLOP follows efficiency.
  CHECK(model.compute_time(exact) > model.memory_time(exact));
  CHECK(seconds_per_flop(model, one_more) > seconds_per_flop(model, exact));
  CHECK(model.efficiency(one_more) < model.efficiency(exact));
}

TEST_CASE("tile quantization: one row past a tile multiple wastes a tile row") {
  DeviceSpec no_waves = preset_device("dgx-h100");
  no_waves.sm_count = 0;  // isolate the tile effect from wave quantization
  const RooflineGemmModel model(no_waves);
  const GemmShape aligned = bf16(4096, 4096, 8192);
  const GemmShape ragged = bf16(4097, 4096, 8192);
  CHECK(model.breakdown(aligned).tile == 1.0);
  CHECK(model.breakdown(ragged).tile == doctest::Approx(4097.0 / 4224.0).scale(0));
  CHECK(model.efficiency(ragged) < model.efficiency(aligned));
  CHECK(seconds_per_flop(model, ragged) > seconds_per_flop(model, aligned));
}

TEST_CASE("large bf16 GEMMs on H100 run at ceiling x peak when shapes are exact multiples") {
  const DeviceSpec h100 = preset_device("dgx-h100");
  const RooflineGemmModel model(h100);
  const double ceiling = model.ceiling(Dtype::kBf16);
  CHECK(ceiling == h100.kernels.gemm_ceiling_bf16);
  CHECK(ceiling == 708.5 / 989.4);  // sustained (H200 MSMF, same die)

  // 16896 = 132 x 128: the grid is exactly 64 full waves of 132 tiles.
  const GemmShape exact = bf16(132 * 128, 8192, 8192);
  CHECK(model.efficiency(exact) == ceiling);
  const double expected = exact.flops().value / (989.4e12 * ceiling);
  CHECK(rel_diff(model.gemm_time(exact).to_seconds(), expected) < 1e-9);

  // 8192^3 is tile-exact but not wave-exact on 132 SMs: 4096 tiles fill 32 waves of 132 = 4224
  // slots, so the model charges the idle slots of the last wave.
  const GemmShape cube = bf16(8192, 8192, 8192);
  const GemmEfficiencyBreakdown b = model.breakdown(cube);
  CHECK(b.tile == 1.0);
  CHECK(b.small_k == 1.0);
  CHECK(b.waves == 32);
  CHECK(model.efficiency(cube) == doctest::Approx(ceiling * 4096.0 / 4224.0).scale(0));
  const double expected_cube = cube.flops().value / (989.4e12 * ceiling * 4096.0 / 4224.0);
  CHECK(rel_diff(model.gemm_time(cube).to_seconds(), expected_cube) < 1e-9);

  // Without an SM count, wave quantization is skipped and 8192^3 reaches the ceiling.
  DeviceSpec no_waves = h100;
  no_waves.sm_count = 0;
  const RooflineGemmModel flat(no_waves);
  CHECK(flat.efficiency(cube) == ceiling);
  CHECK(flat.breakdown(cube).waves == 0);
  CHECK(rel_diff(flat.gemm_time(cube).to_seconds(), cube.flops().value / (989.4e12 * ceiling)) <
        1e-9);
}

TEST_CASE("without a small-K penalty a k=1 outer product is memory-bound: bytes / HBM bandwidth") {
  const DeviceSpec h100 = preset_device("dgx-h100");
  GemmEfficiencyParams no_small_k;
  no_small_k.k_half = 0.0;  // H100's k_half (256) makes even k = 1 compute-bound in the model
  const RooflineGemmModel model(h100, no_small_k);
  const GemmShape outer = bf16(8192, 8192, 1);
  CHECK(model.compute_time(outer) < model.memory_time(outer));
  CHECK(model.gemm_time(outer) == outer.bytes() / h100.hbm_bandwidth);
  CHECK(within_a_picosecond(model.gemm_time(outer), outer.bytes().value / 3.35e12));
}

TEST_CASE("small-K penalty follows k / (k + k_half), normalized at k_ref") {
  const RooflineGemmModel model(preset_device("dgx-h100"));
  const GemmEfficiencyParams& p = model.params();
  const double k_half = model.k_half();
  CHECK(k_half == 256.0);
  const double r_ref = p.k_ref / (p.k_ref + k_half);
  CHECK(model.breakdown(bf16(4096, 4096, 256)).small_k == doctest::Approx(0.5 / r_ref).scale(0));
  CHECK(model.breakdown(bf16(4096, 4096, 128)).small_k ==
        doctest::Approx(128.0 / 384.0 / r_ref).scale(0));
  CHECK(model.breakdown(bf16(4096, 4096, 4096)).small_k == 1.0);
  CHECK(model.breakdown(bf16(4096, 4096, 65536)).small_k == 1.0);
}

TEST_CASE("batched GEMMs schedule batch x tiles thread blocks") {
  const RooflineGemmModel model(preset_device("dgx-h100"));
  const GemmEfficiencyBreakdown b = model.breakdown(bf16(128, 128, 4096, 132));
  CHECK(b.tiles == 132);
  CHECK(b.waves == 1);
  CHECK(b.wave == 1.0);
  CHECK(model.breakdown(bf16(128, 128, 4096, 1)).wave == doctest::Approx(1.0 / 132.0).scale(0));
}

TEST_CASE("the roofline model is usable through the GemmCostModel interface") {
  const RooflineGemmModel roofline(preset_device("dgx-a100-80gb"));
  const GemmCostModel& model = roofline;
  const GemmShape s = bf16(108 * 128, 4096, 4096);
  CHECK(model.efficiency(s) == 256.5 / 312.0);
  CHECK(model.gemm_time(s) == roofline.compute_time(s));
}

TEST_CASE("invalid shapes, dtypes and parameters are rejected") {
  const RooflineGemmModel a100(preset_device("dgx-a100-80gb"));
  CHECK_THROWS_AS(a100.gemm_time(GemmShape{1024, 1024, 1024, 1, Dtype::kFp8}),
                  std::invalid_argument);
  CHECK_THROWS_AS(a100.gemm_time(bf16(0, 1024, 1024)), std::invalid_argument);
  CHECK_THROWS_AS(a100.efficiency(bf16(1024, 1024, 1024, 0)), std::invalid_argument);

  GemmEfficiencyParams bad;
  bad.ceiling = 1.5;
  CHECK_THROWS_AS(RooflineGemmModel(preset_device("dgx-h100"), bad), std::invalid_argument);
  bad = {};
  bad.tile_n = 0;
  CHECK_THROWS_AS(RooflineGemmModel(preset_device("dgx-h100"), bad), std::invalid_argument);
  bad = {};
  bad.memory_efficiency = 0.0;
  CHECK_THROWS_AS(validate(bad), std::invalid_argument);
  CHECK_NOTHROW(validate(GemmEfficiencyParams{}));
}

TEST_CASE("memory-bound kernels: bytes over achievable HBM bandwidth") {
  const DeviceSpec h100 = preset_device("dgx-h100");
  const Bytes moved{1e9};
  const double streaming = (2.90 + 2.97 + 2.97) / 3.0 / 3.35;  // BabelStream, ND H100 v5
  CHECK(h100.kernels.memory_streaming == streaming);
  CHECK(within_a_picosecond(memory_bound_time(moved, h100), 1e9 / (3.35e12 * streaming)));
  CHECK(within_a_picosecond(memory_bound_time(moved, h100, 0.8), 1e9 / (3.35e12 * 0.8)));
  CHECK(within_a_picosecond(memory_bound_time(moved, h100, 1.0), 1e9 / 3.35e12));
  CHECK(memory_bound_time(Bytes{0}, h100) == sim::Time::zero());
  CHECK_THROWS_AS(memory_bound_time(moved, h100, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(memory_bound_time(moved, h100, 1.2), std::invalid_argument);
}

TEST_CASE("kernel_time adds the device's launch overhead once per kernel") {
  const DeviceSpec h100 = preset_device("dgx-h100");
  CHECK(kernel_time(sim::Time::us(10), h100) == sim::Time::us(10) + h100.kernel_launch_overhead);
  CHECK(kernel_time(sim::Time::zero(), h100) == h100.kernel_launch_overhead);
}

}  // namespace parasim::cost

namespace parasim::cost {

TEST_CASE("the roofline reads the device's ceiling per dtype and k_half; params override them") {
  const DeviceSpec h100 = preset_device("dgx-h100");
  const RooflineGemmModel model(h100);
  CHECK(model.ceiling(Dtype::kFp8) == h100.kernels.gemm_ceiling_fp8);
  CHECK(model.ceiling(Dtype::kTf32) == h100.kernels.gemm_ceiling_tf32);
  const GemmShape fp8{132 * 128, 8192, 8192, 1, Dtype::kFp8};
  CHECK(model.efficiency(fp8) == h100.kernels.gemm_ceiling_fp8);
  CHECK(model.k_half() == h100.kernels.gemm_k_half);

  GemmEfficiencyParams p;
  p.ceiling = 0.5;
  p.k_half = 64.0;
  const RooflineGemmModel overridden(h100, p);
  CHECK(overridden.ceiling(Dtype::kFp8) == 0.5);
  CHECK(overridden.ceiling(Dtype::kBf16) == 0.5);
  CHECK(overridden.k_half() == 64.0);
  CHECK(overridden.efficiency(bf16(132 * 128, 8192, 8192)) == 0.5);
}

TEST_CASE("a GEMM body is never shorter than the device's minimum kernel body") {
  DeviceSpec h100 = preset_device("dgx-h100");
  const RooflineGemmModel model(h100);
  const GemmShape tiny = bf16(64, 64, 64);
  CHECK(model.compute_time(tiny) < h100.kernels.min_gemm_body);
  CHECK(model.gemm_time(tiny) == h100.kernels.min_gemm_body);
  CHECK(model.gemm_time(tiny) == sim::Time::us(5));
  const GemmShape big = bf16(8192, 8192, 8192);
  CHECK(model.gemm_time(big) == model.compute_time(big));
  h100.kernels.min_gemm_body = sim::Time::zero();
  CHECK(RooflineGemmModel(h100).gemm_time(tiny) == RooflineGemmModel(h100).compute_time(tiny));
}

TEST_CASE("a written-out device gets the conservative kernel efficiencies") {
  DeviceSpec custom;
  custom.name = "custom";
  custom.peak_bf16 = FlopRate{1000e12};
  custom.hbm_bandwidth = Bandwidth{4000e9};
  custom.sm_count = 0;
  const RooflineGemmModel model(custom);
  CHECK(model.ceiling(Dtype::kBf16) == 0.65);
  CHECK(model.k_half() == 512);
  CHECK(within_a_picosecond(memory_bound_time(Bytes{1e9}, custom), 1e9 / (4000e9 * 0.77)));
}

}  // namespace parasim::cost
