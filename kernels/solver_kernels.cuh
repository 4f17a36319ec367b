#pragma once
// parasim::kernels internal: the small CUDA kernels of the inverse-root solvers (everything that
// is not a matrix product): scaled identity adds, per-block scales, symmetrization, the
// Frobenius norm, one multi-power-iteration step, and the fp32 helpers of EVD and of the test
// matrices. Every launcher enqueues on `stream` and works on a stack of `count` column-major
// B x B blocks (block stride B * B elements) of the storage type of `dtype` unless it says fp32;
// arithmetic is fp32, rounded to the storage type on the store.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gemm_bench.hpp"

namespace parasim::kernels::detail {

// The per-block factor constant * scales[b]^exponent; scales == nullptr means just `constant`.
// scales are the per-block c of the scaling step (units of A's entries).
struct BlockFactor {
  const float* scales = nullptr;
  float constant = 1.0f;
  float exponent = 0.0f;
};

// out_b = f_b in_b + diagonal I for every block b; in == nullptr gives diagonal I. out may be in.
void scale_add_identity(cudaStream_t stream, GpuDtype dtype, int count, int block, const void* in,
                        void* out, BlockFactor factor, float diagonal);

// out_b += value I.
void add_diagonal(cudaStream_t stream, GpuDtype dtype, int count, int block, void* out,
                  float value);

// out_b = (in_b + in_b^T) / 2; out must not be in.
void symmetrize(cudaStream_t stream, GpuDtype dtype, int count, int block, const void* in,
                void* out);

// Partial sums of squares per block, frobenius_chunks(block) of them per block, in a fixed order
// (deterministic: no atomics), for finish_scales.
int frobenius_chunks(int block);
void frobenius_partials(cudaStream_t stream, GpuDtype dtype, int count, int block, const void* a,
                        float* partials);

// One step of the multi-power-iteration (DASH scalers.py; calib::spectral_norm_estimate) for
// every block b and column j < vectors, given W = A V: estimate[b] = max(estimate[b],
// |v_j^T w_j|) (v_j has unit norm), then v_out_j = w_j / ||w_j|| (0 if w_j = 0). V and W are
// B x vectors column-major per block; v_in's block stride is v_in_stride elements (0: one V
// shared by all blocks), v_out's and w's B * vectors. v_out may be v_in when the stride is not 0.
// estimate must start at 0 (it holds non-negative floats compared as integers by atomicMax).
void power_step(cudaStream_t stream, GpuDtype dtype, int count, int block, int vectors,
                const void* v_in, std::int64_t v_in_stride, const void* w, void* v_out,
                float* estimate);

// scale[b] = ||A_b||_F from the partials, or min(||A_b||_F, safety * estimate[b]) when estimate
// is not null (calib::scale_estimate).
void finish_scales(cudaStream_t stream, int count, int chunks, const float* partials,
                   const float* estimate, float safety, float* scale);

// Elementwise storage <-> fp32 (n elements).
void convert_to_float(cudaStream_t stream, GpuDtype dtype, std::size_t n, const void* in,
                      float* out);
void convert_from_float(cudaStream_t stream, GpuDtype dtype, std::size_t n, const float* in,
                        void* out);

// fp32: out_b(i, j) = q_b(i, j) * values[b * values_stride + j]^exponent (values_stride 0: one
// vector for all blocks). EVD: Q diag(lambda^(-1/p)); test matrices: Q diag(lambda).
void scale_columns(cudaStream_t stream, int count, int block, const float* q, const float* values,
                   std::int64_t values_stride, float exponent, float* out);

// *failed |= 1 if some info[i] != 0, i < count (cuSOLVER's per-matrix status; *failed sticks).
void flag_failures(cudaStream_t stream, int count, const int* info, int* failed);

}  // namespace parasim::kernels::detail
