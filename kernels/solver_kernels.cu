// The small kernels of the inverse-root solvers (declarations and contracts in
// kernels/solver_kernels.cuh). All are memory-bound. Kernels over whole blocks use a 2-D grid
// (y: the block of the stack, x: a grid-stride loop over its B^2 entries with 32-bit indices);
// flat ones a 1-D grid-stride loop with 64-bit indices (32 blocks of 2048^2 are 2^27 entries).
#include "kernels/solver_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/cuda_check.cuh"
#include "kernels/seeded_values.cuh"

namespace parasim::kernels::detail {
namespace {

constexpr int kThreads = 256;               // threads per block of every kernel here
constexpr std::int64_t kMaxGrid = 1 << 16;  // grid-stride loops cap the grid here

// Calls f(T{}) with T the storage type of dtype.
template <typename F>
void with_storage_type(GpuDtype dtype, F&& f) {
  switch (dtype) {
    case GpuDtype::kFp32:
      f(float{});
      return;
    case GpuDtype::kFp16:
      f(__half{});
      return;
    case GpuDtype::kBf16:
      f(__nv_bfloat16{});
      return;
  }
}

unsigned grid_for(std::int64_t elements) {
  const std::int64_t blocks = (elements + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, kMaxGrid));
}

__device__ inline std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ inline std::int64_t grid_threads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// The elementwise kernels over a stack use a 2-D grid: y walks the blocks of the stack, x the
// entries of one block with 32-bit indices (B^2 <= 2^31 - 1 for every B these solvers take).
struct StackGrid {
  dim3 grid;
  dim3 threads;
};

StackGrid stack_grid(int count, int block) {
  const std::int64_t square = static_cast<std::int64_t>(block) * block;
  const std::int64_t y = std::min<std::int64_t>(count, 65535);
  const std::int64_t x = std::clamp<std::int64_t>((square + kThreads - 1) / kThreads, 1,
                                                  std::max<std::int64_t>(1, kMaxGrid / y));
  return StackGrid{dim3(static_cast<unsigned>(x), static_cast<unsigned>(y)), dim3(kThreads)};
}

template <typename T>
__global__ void scale_add_identity_kernel(int count, int block, const T* in, T* out,
                                          BlockFactor factor, float diagonal) {
  const int square = block * block;
  for (int b = static_cast<int>(blockIdx.y); b < count; b += static_cast<int>(gridDim.y)) {
    const std::int64_t base = static_cast<std::int64_t>(b) * square;
    const float f = factor.scales == nullptr
                        ? factor.constant
                        : factor.constant * powf(factor.scales[b], factor.exponent);
    for (int within = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); within < square;
         within += static_cast<int>(gridDim.x * blockDim.x)) {
      float value = within % block == within / block ? diagonal : 0.0f;
      if (in != nullptr) value += f * to_float(in[base + within]);
      out[base + within] = from_float<T>(value);
    }
  }
}

template <typename T>
__global__ void add_diagonal_kernel(std::int64_t diagonals, int block, T* out, float value) {
  for (std::int64_t i = global_thread(); i < diagonals; i += grid_threads()) {
    const std::int64_t b = i / block;
    const std::int64_t r = i % block;
    T& entry = out[(b * block + r) * block + r];
    entry = from_float<T>(to_float(entry) + value);
  }
}

template <typename T>
__global__ void symmetrize_kernel(int count, int block, const T* in, T* out) {
  const int square = block * block;
  for (int b = static_cast<int>(blockIdx.y); b < count; b += static_cast<int>(gridDim.y)) {
    const std::int64_t base = static_cast<std::int64_t>(b) * square;
    for (int within = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); within < square;
         within += static_cast<int>(gridDim.x * blockDim.x)) {
      const int transposed = (within % block) * block + within / block;
      out[base + within] =
          from_float<T>(0.5f * (to_float(in[base + within]) + to_float(in[base + transposed])));
    }
  }
}

// Sum over the kThreads threads of a block (fixed tree order). Every thread must call it.
__device__ float block_sum(float value, float* shared) {
  shared[threadIdx.x] = value;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] += shared[threadIdx.x + half];
    __syncthreads();
  }
  const float total = shared[0];
  __syncthreads();
  return total;
}

// One CUDA block per (matrix b, chunk): blockIdx.x = b * chunks + chunk.
template <typename T>
__global__ void frobenius_partials_kernel(int block, int chunks, const T* a, float* partials) {
  __shared__ float shared[kThreads];
  const std::int64_t square = static_cast<std::int64_t>(block) * block;
  const std::int64_t b = blockIdx.x / chunks;
  const std::int64_t chunk = blockIdx.x % chunks;
  const std::int64_t begin = chunk * square / chunks;
  const std::int64_t end = (chunk + 1) * square / chunks;
  const T* matrix = a + b * square;
  float sum = 0.0f;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += kThreads) {
    const float v = to_float(matrix[i]);
    sum += v * v;
  }
  const float total = block_sum(sum, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// One CUDA block per (matrix b, column j): blockIdx.x = b * vectors + j.
template <typename T>
__global__ void power_step_kernel(int block, int vectors, const T* v_in, std::int64_t v_in_stride,
                                  const T* w, T* v_out, float* estimate) {
  __shared__ float shared[kThreads];
  const std::int64_t b = blockIdx.x / vectors;
  const std::int64_t j = blockIdx.x % vectors;
  const T* v_column = v_in + b * v_in_stride + j * block;
  const std::int64_t column_offset = static_cast<std::int64_t>(blockIdx.x) * block;
  float dot = 0.0f;
  float norm2 = 0.0f;
  for (int i = threadIdx.x; i < block; i += kThreads) {
    const float wi = to_float(w[column_offset + i]);
    dot += to_float(v_column[i]) * wi;
    norm2 += wi * wi;
  }
  // Every read of v_in happens before the barriers inside block_sum, so v_out may alias it.
  dot = block_sum(dot, shared);
  norm2 = block_sum(norm2, shared);
  if (threadIdx.x == 0) {
    // Non-negative floats order like their bit patterns read as int.
    atomicMax(reinterpret_cast<int*>(estimate + b), __float_as_int(fabsf(dot)));
  }
  const float inverse = norm2 > 0.0f ? rsqrtf(norm2) : 0.0f;
  for (int i = threadIdx.x; i < block; i += kThreads) {
    v_out[column_offset + i] = from_float<T>(to_float(w[column_offset + i]) * inverse);
  }
}

__global__ void finish_scales_kernel(int count, int chunks, const float* partials,
                                     const float* estimate, float safety, float* scale) {
  for (std::int64_t b = global_thread(); b < count; b += grid_threads()) {
    float sum = 0.0f;
    for (int c = 0; c < chunks; ++c) sum += partials[b * chunks + c];
    float value = sqrtf(sum);
    if (estimate != nullptr) value = fminf(value, safety * estimate[b]);
    scale[b] = value;
  }
}

template <typename T>
__global__ void convert_to_float_kernel(std::int64_t n, const T* in, float* out) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = to_float(in[i]);
}

template <typename T>
__global__ void convert_from_float_kernel(std::int64_t n, const float* in, T* out) {
  for (std::int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = from_float<T>(in[i]);
}

__global__ void scale_columns_kernel(int count, int block, const float* q, const float* values,
                                     std::int64_t values_stride, float exponent, float* out) {
  const int square = block * block;
  for (int b = static_cast<int>(blockIdx.y); b < count; b += static_cast<int>(gridDim.y)) {
    const std::int64_t base = static_cast<std::int64_t>(b) * square;
    const float* column_values = values + b * values_stride;
    for (int within = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); within < square;
         within += static_cast<int>(gridDim.x * blockDim.x)) {
      const float value = column_values[within / block];
      out[base + within] = q[base + within] * (exponent == 1.0f ? value : powf(value, exponent));
    }
  }
}

__global__ void flag_failures_kernel(int count, const int* info, int* failed) {
  for (std::int64_t i = global_thread(); i < count; i += grid_threads()) {
    if (info[i] != 0) atomicOr(failed, 1);
  }
}

}  // namespace

void scale_add_identity(cudaStream_t stream, GpuDtype dtype, int count, int block, const void* in,
                        void* out, BlockFactor factor, float diagonal) {
  const StackGrid g = stack_grid(count, block);
  with_storage_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    scale_add_identity_kernel<T><<<g.grid, g.threads, 0, stream>>>(
        count, block, static_cast<const T*>(in), static_cast<T*>(out), factor, diagonal);
  });
  CUDA_CHECK_LAUNCH();
}

void add_diagonal(cudaStream_t stream, GpuDtype dtype, int count, int block, void* out,
                  float value) {
  const std::int64_t diagonals = static_cast<std::int64_t>(count) * block;
  with_storage_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    add_diagonal_kernel<T><<<grid_for(diagonals), kThreads, 0, stream>>>(
        diagonals, block, static_cast<T*>(out), value);
  });
  CUDA_CHECK_LAUNCH();
}

void symmetrize(cudaStream_t stream, GpuDtype dtype, int count, int block, const void* in,
                void* out) {
  const StackGrid g = stack_grid(count, block);
  with_storage_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    symmetrize_kernel<T><<<g.grid, g.threads, 0, stream>>>(count, block, static_cast<const T*>(in),
                                                           static_cast<T*>(out));
  });
  CUDA_CHECK_LAUNCH();
}

int frobenius_chunks(int block) {
  // About 64 Ki elements per CUDA block, at most 64 chunks per matrix.
  const std::int64_t square = static_cast<std::int64_t>(block) * block;
  return static_cast<int>(std::clamp<std::int64_t>(square >> 16, 1, 64));
}

void frobenius_partials(cudaStream_t stream, GpuDtype dtype, int count, int block, const void* a,
                        float* partials) {
  const int chunks = frobenius_chunks(block);
  const auto grid = static_cast<unsigned>(static_cast<std::int64_t>(count) * chunks);
  with_storage_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    frobenius_partials_kernel<T>
        <<<grid, kThreads, 0, stream>>>(block, chunks, static_cast<const T*>(a), partials);
  });
  CUDA_CHECK_LAUNCH();
}

void power_step(cudaStream_t stream, GpuDtype dtype, int count, int block, int vectors,
                const void* v_in, std::int64_t v_in_stride, const void* w, void* v_out,
                float* estimate) {
  const auto grid = static_cast<unsigned>(static_cast<std::int64_t>(count) * vectors);
  with_storage_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    power_step_kernel<T><<<grid, kThreads, 0, stream>>>(block, vectors, static_cast<const T*>(v_in),
                                                        v_in_stride, static_cast<const T*>(w),
                                                        static_cast<T*>(v_out), estimate);
  });
  CUDA_CHECK_LAUNCH();
}

void finish_scales(cudaStream_t stream, int count, int chunks, const float* partials,
                   const float* estimate, float safety, float* scale) {
  finish_scales_kernel<<<grid_for(count), kThreads, 0, stream>>>(count, chunks, partials, estimate,
                                                                 safety, scale);
  CUDA_CHECK_LAUNCH();
}

void convert_to_float(cudaStream_t stream, GpuDtype dtype, std::size_t n, const void* in,
                      float* out) {
  const auto total = static_cast<std::int64_t>(n);
  with_storage_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    convert_to_float_kernel<T>
        <<<grid_for(total), kThreads, 0, stream>>>(total, static_cast<const T*>(in), out);
  });
  CUDA_CHECK_LAUNCH();
}

void convert_from_float(cudaStream_t stream, GpuDtype dtype, std::size_t n, const float* in,
                        void* out) {
  const auto total = static_cast<std::int64_t>(n);
  with_storage_type(dtype, [&](auto tag) {
    using T = decltype(tag);
    convert_from_float_kernel<T>
        <<<grid_for(total), kThreads, 0, stream>>>(total, in, static_cast<T*>(out));
  });
  CUDA_CHECK_LAUNCH();
}

void scale_columns(cudaStream_t stream, int count, int block, const float* q, const float* values,
                   std::int64_t values_stride, float exponent, float* out) {
  const StackGrid g = stack_grid(count, block);
  scale_columns_kernel<<<g.grid, g.threads, 0, stream>>>(count, block, q, values, values_stride,
                                                         exponent, out);
  CUDA_CHECK_LAUNCH();
}

void flag_failures(cudaStream_t stream, int count, const int* info, int* failed) {
  flag_failures_kernel<<<grid_for(count), kThreads, 0, stream>>>(count, info, failed);
  CUDA_CHECK_LAUNCH();
}

}  // namespace parasim::kernels::detail
