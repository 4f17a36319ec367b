// Stream, handles and the stacked GEMM of the inverse-root solvers (kernels/solver_context.cuh).
#include "kernels/solver_context.cuh"

#include "kernels/cuda_check.cuh"
#include "kernels/solver_kernels.cuh"

namespace parasim::kernels::detail {

SolverHandles::SolverHandles() {
  CUBLAS_CHECK(cublasCreate(&blas_));
  try {
    CUBLAS_CHECK(cublasSetStream(blas_, stream_.get()));
    CUBLAS_CHECK(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
    CUSOLVER_CHECK(cusolverDnCreate(&dense_));
    CUSOLVER_CHECK(cusolverDnSetStream(dense_, stream_.get()));
  } catch (...) {
    if (dense_ != nullptr) cusolverDnDestroy(dense_);
    cublasDestroy(blas_);
    throw;
  }
}

SolverHandles::~SolverHandles() {
  // Nothing may still use the handles' workspaces when they go.
  cudaStreamSynchronize(stream_.get());
  cusolverDnDestroy(dense_);
  cublasDestroy(blas_);
}

cudaDataType cuda_data_type(GpuDtype dtype) {
  switch (dtype) {
    case GpuDtype::kFp32:
      return CUDA_R_32F;
    case GpuDtype::kFp16:
      return CUDA_R_16F;
    case GpuDtype::kBf16:
      return CUDA_R_16BF;
  }
  return CUDA_R_32F;
}

void stack_gemm(const SolverContext& context, GpuDtype dtype, const GemmShape& shape, float alpha,
                const void* a, std::int64_t stride_a, const void* b, std::int64_t stride_b,
                float beta, void* c, std::int64_t stride_c, int count) {
  const cudaDataType type = cuda_data_type(dtype);
  const cublasOperation_t op_a = shape.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = shape.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  // Column-major, stored exactly: A is m x k (k x m when transposed), B k x n (n x k), C m x n.
  const int lda = shape.transpose_a ? shape.k : shape.m;
  const int ldb = shape.transpose_b ? shape.n : shape.k;
  const int ldc = shape.m;
  // alpha and beta are fp32 for CUBLAS_COMPUTE_32F, whatever the storage type.
  if (count == 1) {
    CUBLAS_CHECK(cublasGemmEx(context.blas, op_a, op_b, shape.m, shape.n, shape.k, &alpha, a, type,
                              lda, b, type, ldb, &beta, c, type, ldc, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
    return;
  }
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      context.blas, op_a, op_b, shape.m, shape.n, shape.k, &alpha, a, type, lda,
      static_cast<long long>(stride_a), b, type, ldb, static_cast<long long>(stride_b), &beta, c,
      type, ldc, static_cast<long long>(stride_c), count, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void square_gemm(const SolverContext& context, GpuDtype dtype, int block, const void* a,
                 const void* b, void* c, int count, float alpha, float beta) {
  const std::int64_t square = static_cast<std::int64_t>(block) * block;
  stack_gemm(context, dtype, GemmShape{block, block, block, false, false}, alpha, a, square, b,
             square, beta, c, square, count);
}

void upload_as(const SolverContext& context, GpuDtype dtype, const float* host, std::size_t n,
               void* device) {
  DeviceBuffer staging(n * sizeof(float));
  CUDA_CHECK(cudaMemcpyAsync(staging.get(), host, n * sizeof(float), cudaMemcpyHostToDevice,
                             context.stream));
  convert_from_float(context.stream, dtype, n, staging.as<float>(), device);
  CUDA_CHECK(cudaStreamSynchronize(context.stream));
}

void download_as(const SolverContext& context, GpuDtype dtype, const void* device, std::size_t n,
                 float* host) {
  DeviceBuffer staging(n * sizeof(float));
  convert_to_float(context.stream, dtype, n, device, staging.as<float>());
  CUDA_CHECK(cudaMemcpyAsync(host, staging.get(), n * sizeof(float), cudaMemcpyDeviceToHost,
                             context.stream));
  CUDA_CHECK(cudaStreamSynchronize(context.stream));
}

}  // namespace parasim::kernels::detail
