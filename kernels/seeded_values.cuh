#pragma once
// parasim::kernels internal: seeded pseudo-random inputs that the GPU writes and the host
// recomputes bit for bit, so a host check needs no copy of the inputs.
//
// seeded_uniform(seed, stream, index) is uniform in [-1, 1) on a 2^-23 grid: SplitMix64 (Steele,
// Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014; constants from its
// reference implementation) of (seed, stream, index), top 24 bits. Every value is exact in
// fp32, so host and device agree; storing it as bf16/fp16 rounds to nearest even, on host and
// device alike (cuda_bf16.h / cuda_fp16.h conversions are __host__ __device__).

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gemm_bench.hpp"

namespace parasim::kernels::detail {

__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

__host__ __device__ inline float seeded_uniform(std::uint64_t seed, std::uint64_t stream,
                                                std::uint64_t index) {
  const std::uint64_t bits =
      splitmix64(splitmix64(seed ^ (stream * 0x632be59bd9b4e019ULL)) + index);
  const float unit = static_cast<float>(bits >> 40) * (1.0f / 16777216.0f);  // [0, 1), 2^-24 grid
  return 2.0f * unit - 1.0f;
}

// The storage types of GpuDtype and the fp32 -> storage -> fp32 round trip.
template <typename T>
__host__ __device__ inline T from_float(float v);
template <>
__host__ __device__ inline float from_float<float>(float v) {
  return v;
}
template <>
__host__ __device__ inline __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__host__ __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

__host__ __device__ inline float to_float(float v) { return v; }
__host__ __device__ inline float to_float(__half v) { return __half2float(v); }
__host__ __device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// Host: the value fill_seeded() stores at `index`, read back as fp32.
inline float stored_uniform(GpuDtype dtype, std::uint64_t seed, std::uint64_t stream,
                            std::uint64_t index, float scale = 1.0f, float shift = 0.0f) {
  const float v = scale * seeded_uniform(seed, stream, index) + shift;
  switch (dtype) {
    case GpuDtype::kBf16: return to_float(from_float<__nv_bfloat16>(v));
    case GpuDtype::kFp16: return to_float(from_float<__half>(v));
    case GpuDtype::kFp32: return v;
  }
  return v;
}

inline std::size_t dtype_bytes(GpuDtype dtype) { return dtype == GpuDtype::kFp32 ? 4 : 2; }

// Fills dst[0, count) with `scale * seeded_uniform(seed, stream, i) + shift` as T (grid-stride).
// `scale` must be a power of two: the product is then exact, so a fused multiply-add on the
// device rounds exactly as the host's multiply then add.
template <typename T>
__global__ void fill_seeded_kernel(T* dst, std::size_t count, std::uint64_t seed,
                                   std::uint64_t stream, float scale, float shift) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += step) {
    dst[i] = from_float<T>(scale * seeded_uniform(seed, stream, i) + shift);
  }
}

// Enqueues fill_seeded_kernel for a buffer of `dtype` elements.
void fill_seeded(void* dst, GpuDtype dtype, std::size_t count, std::uint64_t seed,
                 std::uint64_t stream, cudaStream_t cuda_stream, float scale = 1.0f,
                 float shift = 0.0f);

}  // namespace parasim::kernels::detail
