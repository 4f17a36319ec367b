#pragma once
// parasim::kernels internal: the RMSNorm kernel of the bandwidth probe (probe_bench.hpp).
//
// y[r, :] = x[r, :] * rsqrt(mean(x[r, :]^2) + eps) * w, bf16 in and out, fp32 accumulation, one
// block of kNormThreads per row: every thread sums squares over a strided part of the row, a
// warp-shuffle then shared-memory reduction gives the row's sum, and a second pass over the row
// (its 2 * hidden bytes are in L1/L2 by then) writes y. When `hidden` is a multiple of 8 both
// passes move 16 bytes (8 bf16) per load/store. kFused also stores the row's fp32 sum of squares.

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace parasim::kernels::detail {

constexpr int kNormThreads = 256;     // 8 warps per row
constexpr float kRmsNormEps = 1e-6f;  // a typical epsilon; it does not change the timing

// Sum of `value` over the block; every thread gets it. blockDim.x is a multiple of 32, <= 1024.
__device__ inline float block_sum(float value) {
  __shared__ float warp_sums[32];
  for (int offset = 16; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int warp = static_cast<int>(threadIdx.x / 32);
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  const int warps = static_cast<int>(blockDim.x / 32);
  float total = lane < warps ? warp_sums[lane] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2) {
    total += __shfl_xor_sync(0xffffffffu, total, offset);
  }
  return total;
}

// Eight bf16 in 16 bytes.
union Bf16x8 {
  uint4 raw;
  __nv_bfloat162 pairs[4];
};

template <bool kVector, bool kFused>
__global__ void __launch_bounds__(kNormThreads)
    rmsnorm_kernel(const __nv_bfloat16* __restrict__ x, const __nv_bfloat16* __restrict__ w,
                   __nv_bfloat16* __restrict__ y, float* __restrict__ sum_squares,
                   std::int64_t hidden, float eps) {
  const std::int64_t row = blockIdx.x;
  const __nv_bfloat16* x_row = x + row * hidden;
  __nv_bfloat16* y_row = y + row * hidden;
  const int tid = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);

  float local = 0.0f;
  if constexpr (kVector) {
    const std::int64_t vectors = hidden / 8;
    const auto* x_vec = reinterpret_cast<const uint4*>(x_row);
    for (std::int64_t v = tid; v < vectors; v += threads) {
      Bf16x8 pack;
      pack.raw = x_vec[v];
      for (int p = 0; p < 4; ++p) {
        const float2 f = __bfloat1622float2(pack.pairs[p]);
        local += f.x * f.x + f.y * f.y;
      }
    }
  } else {
    for (std::int64_t i = tid; i < hidden; i += threads) {
      const float f = __bfloat162float(x_row[i]);
      local += f * f;
    }
  }
  const float total = block_sum(local);
  if constexpr (kFused) {
    if (tid == 0) sum_squares[row] = total;
  }
  const float inverse_rms = rsqrtf(total / static_cast<float>(hidden) + eps);

  if constexpr (kVector) {
    const std::int64_t vectors = hidden / 8;
    const auto* x_vec = reinterpret_cast<const uint4*>(x_row);
    const auto* w_vec = reinterpret_cast<const uint4*>(w);
    auto* y_vec = reinterpret_cast<uint4*>(y_row);
    for (std::int64_t v = tid; v < vectors; v += threads) {
      Bf16x8 xs, ws, ys;
      xs.raw = x_vec[v];
      ws.raw = w_vec[v];
      for (int p = 0; p < 4; ++p) {
        const float2 xf = __bfloat1622float2(xs.pairs[p]);
        const float2 wf = __bfloat1622float2(ws.pairs[p]);
        ys.pairs[p] = __floats2bfloat162_rn(xf.x * inverse_rms * wf.x, xf.y * inverse_rms * wf.y);
      }
      y_vec[v] = ys.raw;
    }
  } else {
    for (std::int64_t i = tid; i < hidden; i += threads) {
      const float xf = __bfloat162float(x_row[i]);
      y_row[i] = __float2bfloat16_rn(xf * inverse_rms * __bfloat162float(w[i]));
    }
  }
}

}  // namespace parasim::kernels::detail
