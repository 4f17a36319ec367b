// fill_seeded(): the device side of kernels/seeded_values.cuh.
#include "kernels/seeded_values.cuh"

#include <algorithm>

#include "kernels/cuda_check.cuh"

namespace parasim::kernels::detail {
namespace {

constexpr int kThreads = 256;
constexpr std::size_t kMaxBlocks = 8192;  // grid-stride beyond this

template <typename T>
void launch_fill(T* dst, std::size_t count, std::uint64_t seed, std::uint64_t stream,
                 cudaStream_t cuda_stream, float scale, float shift) {
  if (count == 0) return;
  const std::size_t blocks = std::min(kMaxBlocks, (count + kThreads - 1) / kThreads);
  fill_seeded_kernel<T><<<static_cast<unsigned>(blocks), kThreads, 0, cuda_stream>>>(
      dst, count, seed, stream, scale, shift);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void fill_seeded(void* dst, GpuDtype dtype, std::size_t count, std::uint64_t seed,
                 std::uint64_t stream, cudaStream_t cuda_stream, float scale, float shift) {
  switch (dtype) {
    case GpuDtype::kBf16:
      launch_fill(static_cast<__nv_bfloat16*>(dst), count, seed, stream, cuda_stream, scale,
                  shift);
      return;
    case GpuDtype::kFp16:
      launch_fill(static_cast<__half*>(dst), count, seed, stream, cuda_stream, scale, shift);
      return;
    case GpuDtype::kFp32:
      launch_fill(static_cast<float*>(dst), count, seed, stream, cuda_stream, scale, shift);
      return;
  }
}

}  // namespace parasim::kernels::detail
