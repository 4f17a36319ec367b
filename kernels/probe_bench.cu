// measure_rmsnorm() and measure_launch_overhead() of kernels/probe_bench.hpp.
#include "kernels/probe_bench.hpp"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_resources.cuh"
#include "kernels/event_timing.cuh"
#include "kernels/request_checks.hpp"
#include "kernels/rmsnorm_kernel.cuh"
#include "kernels/seeded_values.cuh"

namespace parasim::kernels {
namespace {

// Seeded inputs (seeded_values.cuh): x uniform in [-1, 1), w = 0.5 u + 1 in [0.5, 1.5).
constexpr std::uint64_t kNormSeed = 0x5eed0002ULL;
constexpr std::uint64_t kStreamX = 1;
constexpr std::uint64_t kStreamW = 2;
constexpr float kWeightScale = 0.5f;  // a power of two (fill_seeded)
constexpr float kWeightShift = 1.0f;
constexpr int kCheckedRows = 8;  // rows recomputed on the host

__global__ void empty_kernel() {}

void launch_rmsnorm(const NormRequest& request, const __nv_bfloat16* x, const __nv_bfloat16* w,
                    __nv_bfloat16* y, float* sum_squares, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>(request.rows);
  const bool vector = request.hidden % 8 == 0;
  const float eps = detail::kRmsNormEps;
  if (vector && request.fused_statistic) {
    detail::rmsnorm_kernel<true, true><<<blocks, detail::kNormThreads, 0, stream>>>(
        x, w, y, sum_squares, request.hidden, eps);
  } else if (vector) {
    detail::rmsnorm_kernel<true, false><<<blocks, detail::kNormThreads, 0, stream>>>(
        x, w, y, sum_squares, request.hidden, eps);
  } else if (request.fused_statistic) {
    detail::rmsnorm_kernel<false, true><<<blocks, detail::kNormThreads, 0, stream>>>(
        x, w, y, sum_squares, request.hidden, eps);
  } else {
    detail::rmsnorm_kernel<false, false><<<blocks, detail::kNormThreads, 0, stream>>>(
        x, w, y, sum_squares, request.hidden, eps);
  }
  CUDA_CHECK_LAUNCH();
}

double relative_error(double value, double reference) {
  // The floor only matters for reference 0 (x = 0 gives y = 0 exactly).
  const double error = std::abs(value - reference) / std::max(std::abs(reference), 1e-30);
  return std::isfinite(error) ? error : std::numeric_limits<double>::infinity();
}

// Largest relative error of y (and of the fused sum of squares) over a few rows, against a
// double-precision computation from the same bf16 inputs.
double check_rows(const NormRequest& request, const detail::DeviceBuffer& y,
                  const detail::DeviceBuffer& sum_squares) {
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::int64_t hidden = request.hidden;
  const auto width = static_cast<std::size_t>(hidden);
  std::vector<std::int64_t> rows = {0, request.rows - 1, request.rows / 2};
  for (int c = 0; static_cast<int>(rows.size()) < kCheckedRows && c < kCheckedRows; ++c) {
    const std::uint64_t h = detail::splitmix64(kNormSeed + static_cast<std::uint64_t>(c));
    rows.push_back(static_cast<std::int64_t>(h % static_cast<std::uint64_t>(request.rows)));
  }
  std::vector<__nv_bfloat16> y_row(width);
  double worst = 0;
  for (const std::int64_t row : rows) {
    const std::size_t offset = static_cast<std::size_t>(row) * width;
    CUDA_CHECK(cudaMemcpy(y_row.data(), y.as<__nv_bfloat16>() + offset,
                          width * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
    double squares = 0;
    for (std::size_t i = 0; i < width; ++i) {
      const double xv = detail::stored_uniform(GpuDtype::kBf16, kNormSeed, kStreamX, offset + i);
      squares += xv * xv;
    }
    const double inverse_rms =
        1.0 / std::sqrt(squares / static_cast<double>(hidden) + detail::kRmsNormEps);
    for (std::size_t i = 0; i < width; ++i) {
      const double xv = detail::stored_uniform(GpuDtype::kBf16, kNormSeed, kStreamX, offset + i);
      const double wv = detail::stored_uniform(GpuDtype::kBf16, kNormSeed, kStreamW, i,
                                               kWeightScale, kWeightShift);
      worst = std::max(worst, relative_error(detail::to_float(y_row[i]), xv * inverse_rms * wv));
    }
    if (request.fused_statistic) {
      float device_squares = 0;
      CUDA_CHECK(cudaMemcpy(&device_squares, sum_squares.as<float>() + row, sizeof(float),
                            cudaMemcpyDeviceToHost));
      worst = std::max(worst, relative_error(device_squares, squares));
    }
  }
  return worst;
}

}  // namespace

NormMeasurement measure_rmsnorm(const NormRequest& request, const TimingOptions& options,
                                int device) {
  detail::validate_norm(request);
  detail::validate_timing(options);
  REQUIRE_DEVICE(device);

  const detail::CudaStream stream;
  const auto rows = static_cast<std::size_t>(request.rows);
  const auto hidden = static_cast<std::size_t>(request.hidden);
  const detail::DeviceBuffer x(rows * hidden * sizeof(__nv_bfloat16));
  const detail::DeviceBuffer w(hidden * sizeof(__nv_bfloat16));
  const detail::DeviceBuffer y(rows * hidden * sizeof(__nv_bfloat16));
  const detail::DeviceBuffer sum_squares(request.fused_statistic ? rows * sizeof(float) : 0);
  detail::fill_seeded(x.get(), GpuDtype::kBf16, rows * hidden, kNormSeed, kStreamX, stream.get());
  detail::fill_seeded(w.get(), GpuDtype::kBf16, hidden, kNormSeed, kStreamW, stream.get(),
                      kWeightScale, kWeightShift);
  std::optional<detail::L2Flusher> flusher;
  if (options.flush_l2) flusher.emplace();

  const auto run = [&] {
    launch_rmsnorm(request, x.as<__nv_bfloat16>(), w.as<__nv_bfloat16>(), y.as<__nv_bfloat16>(),
                   sum_squares.as<float>(), stream.get());
  };
  for (int i = 0; i < options.warmup; ++i) run();
  const std::vector<double> samples = detail::sample_event_times(
      stream.get(), options.iterations,
      [&] {
        if (flusher) flusher->flush(stream.get());
      },
      run);

  NormMeasurement result;
  result.time = summarize(samples);
  // probe_bench.hpp: read x and write y (2 bytes each per element), read w; fused: 4 B per row.
  const double elements = static_cast<double>(request.rows) * static_cast<double>(request.hidden);
  result.bytes_moved = 2.0 * elements * 2.0 + static_cast<double>(request.hidden) * 2.0 +
                       (request.fused_statistic ? 4.0 * static_cast<double>(request.rows) : 0.0);
  result.max_relative_error = check_rows(request, y, sum_squares);
  return result;
}

TimingStats measure_launch_overhead(int launches, const TimingOptions& options, int device) {
  if (launches < 1) {
    throw std::invalid_argument("launch overhead: launches must be at least 1 (got " +
                                std::to_string(launches) + ")");
  }
  detail::validate_timing(options);
  REQUIRE_DEVICE(device);

  const detail::CudaStream stream;
  const auto batch = [&] {
    for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1, 0, stream.get()>>>();
    CUDA_CHECK_LAUNCH();
  };
  for (int i = 0; i < options.warmup; ++i) batch();
  std::vector<double> samples =
      detail::sample_event_times(stream.get(), options.iterations, [] {}, batch);
  for (double& s : samples) s /= static_cast<double>(launches);
  return summarize(std::move(samples));
}

}  // namespace parasim::kernels
