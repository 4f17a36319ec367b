// GPU checks of the measurement kernels (run with `ctest -L gpu` on a machine with a CUDA
// device; gpu_test_main.cpp skips with exit code 77 without one): cuBLASLt GEMM results for
// each dtype, transpose and batch, a large bf16 GEMM's rate, RMSNorm, launch overhead, and a
// single-rank NCCL communicator's collectives and overlap probe.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/collective_bench.hpp"
#include "kernels/device_probe.hpp"
#include "kernels/gemm_bench.hpp"
#include "kernels/gpu_error.hpp"
#include "kernels/probe_bench.hpp"

namespace pk = parasim::kernels;

namespace {

pk::TimingOptions quick() {
  pk::TimingOptions options;
  options.warmup = 1;
  options.iterations = 3;
  return options;
}

// Largest relative error a correct result shows (gemm_bench.hpp's measure; the host reference
// uses the stored, already rounded inputs). bf16/fp16: the output's rounding (unit roundoff 2^-8,
// 2^-11); a host simulation of these tests with sequential fp32 accumulation gives at most
// 3.8e-3 / 4.5e-4. fp32: accumulation order only, simulated at most 2e-5. TF32 rounds the inputs
// to 11 bits inside the product, an error relative to the terms rather than the result, so the
// measure's floor 1e-3 sqrt(k) lets it grow (simulated 1.8e-2 for 512^3). A layout or transpose
// mistake gives errors of order 1.
double gemm_tolerance(pk::GpuDtype dtype, bool tf32) {
  switch (dtype) {
    case pk::GpuDtype::kBf16: return 2e-2;
    case pk::GpuDtype::kFp16: return 5e-3;
    case pk::GpuDtype::kFp32: return tf32 ? 1e-1 : 2e-4;
  }
  return 0;
}

struct Shape {
  std::int64_t m, n, k, batch;
};

}  // namespace

TEST_CASE("cuBLASLt GEMM results match the host for every dtype, transpose and batch") {
  // Includes a shape with odd sizes (no 16-byte alignment of the leading dimensions).
  const Shape shapes[] = {{64, 48, 80, 1}, {256, 128, 512, 1}, {127, 33, 65, 1},
                          {128, 64, 96, 4}};
  const pk::GpuDtype dtypes[] = {pk::GpuDtype::kBf16, pk::GpuDtype::kFp16, pk::GpuDtype::kFp32};
  for (const Shape& shape : shapes) {
    for (const pk::GpuDtype dtype : dtypes) {
      for (int transposes = 0; transposes < 4; ++transposes) {
        pk::GemmRequest request;
        request.m = shape.m;
        request.n = shape.n;
        request.k = shape.k;
        request.batch = shape.batch;
        request.dtype = dtype;
        request.transpose_a = (transposes & 1) != 0;
        request.transpose_b = (transposes & 2) != 0;
        request.checks = 32;
        CAPTURE(shape.m);
        CAPTURE(shape.n);
        CAPTURE(shape.k);
        CAPTURE(shape.batch);
        CAPTURE(std::string{pk::gpu_dtype_name(dtype)});
        CAPTURE(transposes);
        const pk::GemmMeasurement result = pk::measure_gemm(request, quick());
        CHECK(result.checked == 32);
        CHECK(result.max_relative_error < gemm_tolerance(dtype, false));
        CHECK(result.flops ==
              doctest::Approx(2.0 * static_cast<double>(shape.m * shape.n * shape.k * shape.batch))
                  .scale(0));
        CHECK(result.time.samples == 3);
        CHECK(result.time.median_s > 0);
      }
    }
  }
}

TEST_CASE("fp32 GEMM on TF32 tensor cores stays within TF32 precision") {
  pk::GemmRequest request;
  request.m = request.n = request.k = 512;
  request.dtype = pk::GpuDtype::kFp32;
  request.allow_tf32 = true;
  const pk::GemmMeasurement result = pk::measure_gemm(request, quick());
  CHECK(result.max_relative_error < gemm_tolerance(pk::GpuDtype::kFp32, true));
}

TEST_CASE("a large bf16 GEMM runs near the tensor-core rate") {
  pk::GemmRequest request;
  request.m = request.n = request.k = 8192;
  request.dtype = pk::GpuDtype::kBf16;
  request.checks = 16;
  pk::TimingOptions options;
  options.warmup = 3;
  options.iterations = 10;
  const pk::GemmMeasurement result = pk::measure_gemm(request, options);
  const double tflops = result.flops / result.time.median_s / 1e12;
  std::printf(
      "bf16 GEMM 8192^3: median %.3f ms (p20 %.3f, p80 %.3f), %.1f TFLOP/s, max rel err %.2e\n",
      result.time.median_s * 1e3, result.time.p20_s * 1e3, result.time.p80_s * 1e3, tflops,
      result.max_relative_error);
  CHECK(result.max_relative_error < gemm_tolerance(pk::GpuDtype::kBf16, false));
  // A100 reaches ~270 TFLOP/s, H100/H200 ~700-800 (stas00/ml-engineering's MAMF finder); far below 100
  // means no tensor cores (wrong compute type) or a broken timing.
  CHECK(tflops > 100.0);
}

TEST_CASE("RMSNorm matches the host, vectorised and scalar, plain and fused") {
  const pk::NormRequest requests[] = {{1024, 4096, false}, {1024, 4096, true},
                                      {37, 1001, false},   {37, 1001, true}};
  for (const pk::NormRequest& request : requests) {
    CAPTURE(request.rows);
    CAPTURE(request.hidden);
    CAPTURE(request.fused_statistic);
    const pk::NormMeasurement result = pk::measure_rmsnorm(request, quick());
    // bf16 output: unit roundoff 2^-8 = 3.9e-3.
    CHECK(result.max_relative_error < 1e-2);
    const double elements = static_cast<double>(request.rows * request.hidden);
    CHECK(result.bytes_moved ==
          doctest::Approx(4.0 * elements + 2.0 * static_cast<double>(request.hidden) +
                          (request.fused_statistic ? 4.0 * static_cast<double>(request.rows) : 0))
              .scale(0));
    CHECK(result.time.median_s > 0);
  }
  pk::TimingOptions options;
  options.iterations = 10;
  const pk::NormMeasurement large =
      pk::measure_rmsnorm(pk::NormRequest{16384, 8192, true}, options);
  std::printf("RMSNorm 16384 x 8192 fused: %.1f us, %.0f GB/s\n", large.time.median_s * 1e6,
              large.bytes_moved / large.time.median_s / 1e9);
  CHECK(large.max_relative_error < 1e-2);
}

TEST_CASE("launch overhead is positive and below 100 us") {
  pk::TimingOptions options;
  options.warmup = 2;
  options.iterations = 10;
  const pk::TimingStats stats = pk::measure_launch_overhead(1000, options);
  std::printf("empty-kernel launch: median %.2f us\n", stats.median_s * 1e6);
  CHECK(stats.median_s > 0);
  CHECK(stats.median_s < 100e-6);
  CHECK(stats.samples == 10);
}

TEST_CASE("a single-rank NCCL communicator runs every collective correctly") {
  const pk::DeviceProbe probe = pk::probe_devices();
  CHECK(probe.cublas_version > 0);
  if (probe.nccl_version == 0) {  // built with CUDA but without NCCL
    CHECK_THROWS_AS(pk::NcclCommunicator(0, 1, 0, [](void*, std::size_t) {}),
                    pk::GpuUnavailable);
    return;
  }
  pk::NcclCommunicator communicator(0, 1, 0, [](void*, std::size_t) {});
  CHECK(communicator.rank() == 0);
  CHECK(communicator.world() == 1);
  const pk::NcclCollective kinds[] = {
      pk::NcclCollective::kAllReduce, pk::NcclCollective::kAllGather,
      pk::NcclCollective::kReduceScatter, pk::NcclCollective::kBroadcast,
      pk::NcclCollective::kAllToAll, pk::NcclCollective::kSendRecv};
  const std::size_t sizes[] = {std::size_t{1} << 20, 1000};  // 1000: not a power of two
  for (const pk::NcclCollective kind : kinds) {
    for (const std::size_t bytes : sizes) {
      for (const bool in_place : {false, true}) {
        CAPTURE(static_cast<int>(kind));
        CAPTURE(bytes);
        CAPTURE(in_place);
        const pk::CollectiveMeasurement result =
            communicator.measure(kind, bytes, in_place, quick());
        const bool unchecked = in_place && (kind == pk::NcclCollective::kAllToAll ||
                                            kind == pk::NcclCollective::kSendRecv);
        CHECK(result.checked == !unchecked);
        CHECK(result.correct);
        CHECK(result.message_bytes == bytes);
        // One rank: NCCL may do no work at all (in-place), so the time can read 0.
        CHECK(result.time.median_s >= 0);
      }
    }
  }
  CHECK_THROWS_AS(communicator.measure(pk::NcclCollective::kAllReduce, 2, false, quick()),
                  std::invalid_argument);

  pk::GemmRequest gemm;
  gemm.m = gemm.n = gemm.k = 2048;
  gemm.checks = 0;
  const pk::OverlapMeasurement overlap =
      communicator.measure_overlap(gemm, std::size_t{64} << 20, quick());
  std::printf("overlap (1 rank): GEMM %.1f -> %.1f us, all-reduce %.1f -> %.1f us\n",
              overlap.gemm_alone_s * 1e6, overlap.gemm_overlapped_s * 1e6,
              overlap.allreduce_alone_s * 1e6, overlap.allreduce_overlapped_s * 1e6);
  CHECK(overlap.gemm_alone_s > 0);
  CHECK(overlap.gemm_overlapped_s > 0);
  CHECK(overlap.allreduce_alone_s >= 0);
  CHECK(overlap.allreduce_overlapped_s >= 0);
}
