#pragma once
// parasim::kernels internal: what every inverse-root solver step runs on — one stream, a cuBLAS
// and a cuSOLVER handle bound to it — and the GEMM of the solvers: C_i = alpha op(A_i) op(B_i) +
// beta C_i over a stack, column-major, one cublasGemmStridedBatchedEx for a stack of several
// blocks and one cublasGemmEx for a single block (the per-block mode's "one launch per block
// and product"). fp32 runs CUBLAS_COMPUTE_32F (no TF32: the handle keeps CUBLAS_DEFAULT_MATH);
// fp16 / bf16 inputs and outputs with CUBLAS_COMPUTE_32F accumulate in fp32 (cuBLAS
// documentation, cublasGemmEx's table of supported type combinations).

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda_resources.cuh"
#include "kernels/gemm_bench.hpp"

namespace parasim::kernels::detail {

// The stream and library handles of one solver run (owned by SolverHandles).
struct SolverContext {
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cusolverDnHandle_t dense = nullptr;
};

// Creates the stream and handles on the current device and binds the handles to the stream.
class SolverHandles {
 public:
  SolverHandles();
  ~SolverHandles();
  SolverHandles(const SolverHandles&) = delete;
  SolverHandles& operator=(const SolverHandles&) = delete;

  SolverContext context() const { return SolverContext{stream_.get(), blas_, dense_}; }

 private:
  CudaStream stream_;
  cublasHandle_t blas_ = nullptr;
  cusolverDnHandle_t dense_ = nullptr;
};

cudaDataType cuda_data_type(GpuDtype dtype);

// One product of every block of a stack: op(A_i) is m x k, op(B_i) k x n, C_i m x n, all
// column-major with the smallest leading dimensions; strides in elements (0 reuses one operand
// for every block). count == 1 calls cublasGemmEx, otherwise cublasGemmStridedBatchedEx.
struct GemmShape {
  int m = 0;
  int n = 0;
  int k = 0;
  bool transpose_a = false;
  bool transpose_b = false;
};
void stack_gemm(const SolverContext& context, GpuDtype dtype, const GemmShape& shape, float alpha,
                const void* a, std::int64_t stride_a, const void* b, std::int64_t stride_b,
                float beta, void* c, std::int64_t stride_c, int count);

// C_i = alpha A_i B_i + beta C_i for `count` B x B blocks (block stride B * B).
void square_gemm(const SolverContext& context, GpuDtype dtype, int block, const void* a,
                 const void* b, void* c, int count, float alpha = 1.0f, float beta = 0.0f);

// Host fp32 values to `n` device elements of `dtype` and back (through an fp32 device buffer
// and the conversion kernels); both wait for the stream, so `host` may go right after.
void upload_as(const SolverContext& context, GpuDtype dtype, const float* host, std::size_t n,
               void* device);
void download_as(const SolverContext& context, GpuDtype dtype, const void* device, std::size_t n,
                 float* host);

}  // namespace parasim::kernels::detail
