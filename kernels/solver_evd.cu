// The eigendecomposition root on a device stack (kernels/solver_evd.cuh).
#include "kernels/solver_evd.cuh"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda_check.cuh"
#include "kernels/seeded_values.cuh"
#include "kernels/solver_kernels.cuh"

// cusolverDnXsyevBatched arrived in cuSOLVER 11.7.1 (CUDA 12.6 update 2).
#if defined(CUSOLVER_VERSION) && CUSOLVER_VERSION >= 11701
#define PARASIM_HAVE_SYEV_BATCHED 1
#else
#define PARASIM_HAVE_SYEV_BATCHED 0
#endif

namespace parasim::kernels::detail {
namespace {

constexpr int kJacobiMaxBlock = 32;  // syevjBatched's n limit (cuSOLVER documentation)
constexpr cusolverEigMode_t kVectors = CUSOLVER_EIG_MODE_VECTOR;
constexpr cublasFillMode_t kLower = CUBLAS_FILL_MODE_LOWER;

std::size_t floats(int count, int block) {
  return static_cast<std::size_t>(count) * static_cast<std::size_t>(block) *
         static_cast<std::size_t>(block);
}

}  // namespace

EvdRoot::EvdRoot(const SolverContext& context, const SolverRequest& request, int capacity)
    : request_(request), capacity_(capacity) {
  const int b = request.block;
  vectors_ = DeviceBuffer(floats(capacity, b) * sizeof(float));
  scaled_ = DeviceBuffer(floats(capacity, b) * sizeof(float));
  if (request.dtype != GpuDtype::kFp32) root32_ = DeviceBuffer(floats(capacity, b) * sizeof(float));
  eigenvalues_ = DeviceBuffer(static_cast<std::size_t>(capacity) * b * sizeof(float));
  info_ = DeviceBuffer(static_cast<std::size_t>(capacity) * sizeof(int));
  failed_ = DeviceBuffer(sizeof(int));
  CUDA_CHECK(cudaMemsetAsync(failed_.get(), 0, sizeof(int), context.stream));

  std::size_t device_bytes = 0;
  std::size_t host_bytes = 0;
  if (b <= kJacobiMaxBlock) {
    CUSOLVER_CHECK(cusolverDnCreateSyevjInfo(&jacobi_));
    CUSOLVER_CHECK(cusolverDnSsyevjBatched_bufferSize(
        context.dense, kVectors, kLower, b, vectors_.as<float>(), b, eigenvalues_.as<float>(),
        &jacobi_work_, jacobi_, capacity));
    device_bytes = static_cast<std::size_t>(jacobi_work_) * sizeof(float);
  } else {
    CUSOLVER_CHECK(cusolverDnCreateParams(&params_));
#if PARASIM_HAVE_SYEV_BATCHED
    // n * lda * batch <= INT32_MAX; the workspace for the largest call also serves the last,
    // smaller chunk (queried too, to be sure).
    const std::int64_t square = static_cast<std::int64_t>(b) * b;
    chunk_ = static_cast<int>(std::min<std::int64_t>(capacity, INT_MAX / square));
    for (const int batch : {chunk_, capacity % chunk_}) {
      if (batch == 0) continue;
      std::size_t d = 0;
      std::size_t h = 0;
      CUSOLVER_CHECK(cusolverDnXsyevBatched_bufferSize(
          context.dense, params_, kVectors, kLower, b, CUDA_R_32F, vectors_.get(), b, CUDA_R_32F,
          eigenvalues_.get(), CUDA_R_32F, &d, &h, batch));
      device_bytes = std::max(device_bytes, d);
      host_bytes = std::max(host_bytes, h);
    }
#else
    CUSOLVER_CHECK(cusolverDnXsyevd_bufferSize(
        context.dense, params_, kVectors, kLower, b, CUDA_R_32F, vectors_.get(), b, CUDA_R_32F,
        eigenvalues_.get(), CUDA_R_32F, &device_bytes, &host_bytes));
#endif
  }
  work_ = DeviceBuffer(device_bytes);
  host_work_.resize(host_bytes);
}

EvdRoot::~EvdRoot() {
  if (jacobi_ != nullptr) cusolverDnDestroySyevjInfo(jacobi_);
  if (params_ != nullptr) cusolverDnDestroyParams(params_);
}

void EvdRoot::eigensolve(const SolverContext& context, int count) {
  const int b = request_.block;
  float* a = vectors_.as<float>();
  float* w = eigenvalues_.as<float>();
  int* info = info_.as<int>();
  if (b <= kJacobiMaxBlock) {
    CUSOLVER_CHECK(cusolverDnSsyevjBatched(context.dense, kVectors, kLower, b, a, b, w,
                                           work_.as<float>(), jacobi_work_, info, jacobi_, count));
    return;
  }
  void* host = host_work_.empty() ? nullptr : host_work_.data();
#if PARASIM_HAVE_SYEV_BATCHED
  for (int first = 0; first < count; first += chunk_) {
    const int batch = std::min(chunk_, count - first);
    CUSOLVER_CHECK(cusolverDnXsyevBatched(
        context.dense, params_, kVectors, kLower, b, CUDA_R_32F, a + floats(first, b), b,
        CUDA_R_32F, w + static_cast<std::size_t>(first) * b, CUDA_R_32F, work_.get(), work_.bytes(),
        host, host_work_.size(), info + first, batch));
  }
#else
  for (int first = 0; first < count; ++first) {
    CUSOLVER_CHECK(cusolverDnXsyevd(
        context.dense, params_, kVectors, kLower, b, CUDA_R_32F, a + floats(first, b), b,
        CUDA_R_32F, w + static_cast<std::size_t>(first) * b, CUDA_R_32F, work_.get(), work_.bytes(),
        host, host_work_.size(), info + first));
  }
#endif
}

void EvdRoot::solve(const SolverContext& context, const void* a, void* root, int count) {
  if (count < 1 || count > capacity_) throw std::logic_error("EvdRoot: count out of range");
  const int b = request_.block;
  const std::size_t elements = floats(count, b);
  if (request_.dtype == GpuDtype::kFp32) {
    CUDA_CHECK(cudaMemcpyAsync(vectors_.get(), a, elements * sizeof(float),
                               cudaMemcpyDeviceToDevice, context.stream));
  } else {
    convert_to_float(context.stream, request_.dtype, elements, a, vectors_.as<float>());
  }
  eigensolve(context, count);
  flag_failures(context.stream, count, info_.as<int>(), failed_.as<int>());
  // Q diag(lambda^(-1/p)), then (Q diag(lambda^(-1/p))) Q^T: one fp32 product.
  scale_columns(context.stream, count, b, vectors_.as<float>(), eigenvalues_.as<float>(), b,
                -1.0f / static_cast<float>(request_.p), scaled_.as<float>());
  const std::int64_t square = static_cast<std::int64_t>(b) * b;
  void* out = request_.dtype == GpuDtype::kFp32 ? root : root32_.get();
  stack_gemm(context, GpuDtype::kFp32, GemmShape{b, b, b, false, true}, 1.0f, scaled_.get(), square,
             vectors_.get(), square, 0.0f, out, square, count);
  if (request_.dtype != GpuDtype::kFp32) {
    convert_from_float(context.stream, request_.dtype, elements, root32_.as<float>(), root);
  }
}

void EvdRoot::check(const SolverContext& context) const {
  int failed = 0;
  CUDA_CHECK(
      cudaMemcpyAsync(&failed, failed_.get(), sizeof(int), cudaMemcpyDeviceToHost, context.stream));
  CUDA_CHECK(cudaStreamSynchronize(context.stream));
  if (failed != 0) {
    throw GpuError("EVD: the cuSOLVER eigensolver reported info != 0 for some block of size " +
                   std::to_string(request_.block) + " (not converged or invalid input)");
  }
}

}  // namespace parasim::kernels::detail
