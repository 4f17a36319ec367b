// The GPU measurements where there is nothing to measure on: built without CUDA
// (PARASIM_EXPECT_CUDA_BUILT == 0, from tests/kernels/CMakeLists.txt), or built with CUDA on a
// machine without a usable device. Every one throws GpuUnavailable with a reason.
#include <doctest/doctest.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "kernels/collective_bench.hpp"
#include "kernels/device_probe.hpp"
#include "kernels/gemm_bench.hpp"
#include "kernels/gpu_error.hpp"
#include "kernels/probe_bench.hpp"

namespace pk = parasim::kernels;

namespace {

bool nothing_to_measure_on() {
  return PARASIM_EXPECT_CUDA_BUILT == 0 || pk::probe_devices().devices.empty();
}

// Runs `measure` and checks that it throws GpuUnavailable with a non-empty message.
template <typename Measure>
void check_unavailable(const char* what, Measure&& measure) {
  INFO(what);
  try {
    measure();
    FAIL("no exception");
  } catch (const pk::GpuUnavailable& error) {
    CHECK_FALSE(std::string{error.what()}.empty());
    if (PARASIM_EXPECT_CUDA_BUILT == 0) {
      CHECK(std::string{error.what()}.find("built without CUDA") != std::string::npos);
    }
  }
}

pk::GemmRequest small_gemm() {
  pk::GemmRequest request;
  request.m = request.n = request.k = 64;
  return request;
}

}  // namespace

TEST_CASE("every GPU measurement throws GpuUnavailable when there is no device") {
  if (!nothing_to_measure_on()) return;  // a GPU is present: tests/kernels/gpu_*_test.cpp
  const pk::TimingOptions options;
  check_unavailable("measure_gemm", [&] { pk::measure_gemm(small_gemm(), options); });
  check_unavailable("measure_rmsnorm", [&] {
    pk::measure_rmsnorm(pk::NormRequest{128, 1024, false}, options);
  });
  check_unavailable("measure_rmsnorm fused", [&] {
    pk::measure_rmsnorm(pk::NormRequest{128, 1024, true}, options);
  });
  check_unavailable("measure_launch_overhead",
                    [&] { pk::measure_launch_overhead(100, options); });
  check_unavailable("NcclCommunicator", [&] {
    pk::NcclCommunicator communicator(0, 1, 0, [](void*, std::size_t) {});
  });
}

TEST_CASE("without CUDA the probe reports no cuBLAS") {
  if (PARASIM_EXPECT_CUDA_BUILT != 0) return;
  CHECK(pk::probe_devices().cublas_version == 0);
}

TEST_CASE("with CUDA a malformed request is invalid_argument, device or not") {
  if (PARASIM_EXPECT_CUDA_BUILT == 0) return;
  pk::GemmRequest gemm = small_gemm();
  gemm.k = 0;
  CHECK_THROWS_AS(pk::measure_gemm(gemm, pk::TimingOptions{}), std::invalid_argument);
  pk::TimingOptions no_samples;
  no_samples.iterations = 0;
  CHECK_THROWS_AS(pk::measure_gemm(small_gemm(), no_samples), std::invalid_argument);
  CHECK_THROWS_AS(pk::measure_rmsnorm(pk::NormRequest{0, 1024, false}, pk::TimingOptions{}),
                  std::invalid_argument);
  CHECK_THROWS_AS(pk::measure_launch_overhead(0, pk::TimingOptions{}), std::invalid_argument);
  CHECK_THROWS_AS(pk::NcclCommunicator(1, 1, 0, [](void*, std::size_t) {}),
                  std::invalid_argument);
}

TEST_CASE("gpu_dtype_name names every dtype in every build") {
  CHECK(std::string{pk::gpu_dtype_name(pk::GpuDtype::kBf16)} == "bf16");
  CHECK(std::string{pk::gpu_dtype_name(pk::GpuDtype::kFp16)} == "fp16");
  CHECK(std::string{pk::gpu_dtype_name(pk::GpuDtype::kFp32)} == "fp32");
}
