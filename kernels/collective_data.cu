// The pattern fill and the on-device check of kernels/collective_data.cuh.
#include "kernels/collective_data.cuh"

#include <algorithm>

#include "kernels/cuda_check.cuh"

namespace parasim::kernels::detail {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 8192;  // grid-stride beyond this
constexpr double kRelativeTolerance = 1e-5;  // collective_bench.hpp

unsigned grid_for(std::size_t count) {
  return static_cast<unsigned>(std::min(kMaxBlocks, (count + kThreads - 1) / kThreads));
}

__global__ void fill_pattern_kernel(float* dst, std::size_t count, int owner) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += step) {
    dst[i] = static_cast<float>(owner) + static_cast<float>(i % kPatternPeriod);
  }
}

__global__ void fill_constant_kernel(float* dst, std::size_t count, float value) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += step) {
    dst[i] = value;
  }
}

__global__ void count_mismatches_kernel(const float* data, std::size_t count,
                                        ExpectedPattern expected, unsigned long long* counter) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long wrong = 0;
  for (std::size_t j = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       j < count; j += step) {
    const std::size_t block = j / expected.block;
    const std::size_t inner = j % expected.block;
    const double want = expected.base + expected.block_step * static_cast<double>(block) +
                        expected.multiplier *
                            static_cast<double>((expected.offset + inner) % kPatternPeriod);
    const double got = data[j];
    // Written so that NaN fails: !(|got - want| <= tol).
    if (!(fabs(got - want) <= kRelativeTolerance * fmax(fabs(want), 1.0))) ++wrong;
  }
  if (wrong > 0) atomicAdd(counter, wrong);
}

}  // namespace

void fill_pattern(float* dst, std::size_t count, int owner, cudaStream_t stream) {
  if (count == 0) return;
  fill_pattern_kernel<<<grid_for(count), kThreads, 0, stream>>>(dst, count, owner);
  CUDA_CHECK_LAUNCH();
}

void fill_constant(float* dst, std::size_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  fill_constant_kernel<<<grid_for(count), kThreads, 0, stream>>>(dst, count, value);
  CUDA_CHECK_LAUNCH();
}

unsigned long long count_mismatches(const float* data, std::size_t count,
                                    const ExpectedPattern& expected,
                                    unsigned long long* counter, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), stream));
  if (count > 0) {
    count_mismatches_kernel<<<grid_for(count), kThreads, 0, stream>>>(data, count, expected,
                                                                     counter);
    CUDA_CHECK_LAUNCH();
  }
  unsigned long long wrong = 0;
  CUDA_CHECK(cudaMemcpyAsync(&wrong, counter, sizeof(wrong), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return wrong;
}

}  // namespace parasim::kernels::detail
