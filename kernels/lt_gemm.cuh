#pragma once
// parasim::kernels internal: one cuBLASLt matmul set up once and enqueued many times (the GEMM
// benchmark and the overlap probe share it).
//
// Layout (cuBLAS column-major convention, gemm_bench.hpp): D[m x n] = op(A) op(B), batch times.
// cuBLASLt describes each operand as STORED, before its transpose (CUDALibrarySamples
// cuBLASLt/LtSgemm: A's layout is (transa == N ? m : k) x (transa == N ? k : m)), so
//   A: m x k, ld m (N)   or  k x m, ld k (T)   element (i, l) of op(A) at i + l*m  or  l + i*k
//   B: k x n, ld k (N)   or  n x k, ld n (T)   element (l, j) of op(B) at l + j*k  or  j + l*n
//   D: m x n, ld m                             element (i, j)           at i + j*m
// and batch b of each starts b * rows * cols elements further (CUBLASLT_MATRIX_LAYOUT_
// STRIDED_BATCH_OFFSET, in elements). C is D (beta = 0).

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <type_traits>

#include "kernels/cuda_resources.cuh"
#include "kernels/gemm_bench.hpp"

namespace parasim::kernels::detail {

// cuBLASLt workspace: 32 MiB, what cuBLAS recommends on Hopper (cuBLAS documentation, cublasSetWorkspace).
constexpr std::size_t kLtWorkspaceBytes = std::size_t{32} << 20;

struct GemmCheck {
  double max_relative_error = 0;
  int checked = 0;
};

// Owners of cuBLASLt objects (their destroy calls' statuses are ignored).
struct LtDeleter {
  void operator()(cublasLtHandle_t handle) const { cublasLtDestroy(handle); }
  void operator()(cublasLtMatmulDesc_t desc) const { cublasLtMatmulDescDestroy(desc); }
  void operator()(cublasLtMatrixLayout_t layout) const { cublasLtMatrixLayoutDestroy(layout); }
  void operator()(cublasLtMatmulPreference_t pref) const { cublasLtMatmulPreferenceDestroy(pref); }
};
template <typename Handle>
using LtOwner = std::unique_ptr<std::remove_pointer_t<Handle>, LtDeleter>;

class LtGemm {
 public:
  // On the current device: validates `request` (std::invalid_argument), allocates A, B, D and
  // the workspace, fills A and B with values seeded by request.seed (on `stream`, then waits for
  // it), builds the descriptors and takes the heuristic's first algorithm (GpuError when there
  // is none).
  LtGemm(const GemmRequest& request, cudaStream_t stream);
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // Enqueues one matmul (all batches) on `stream`.
  void enqueue(cudaStream_t stream) const;

  double flops() const;  // 2 m n k batch

  // Waits for the device, then recomputes `checks` output elements (the corners first, then
  // seeded positions) on the host in double from the stored inputs; relative error as
  // gemm_bench.hpp defines it. Non-finite results count as an infinite error.
  GemmCheck check(int checks) const;

 private:
  GemmRequest request_;
  DeviceBuffer a_;
  DeviceBuffer b_;
  DeviceBuffer d_;
  DeviceBuffer workspace_;
  LtOwner<cublasLtHandle_t> handle_;
  LtOwner<cublasLtMatmulDesc_t> operation_;
  LtOwner<cublasLtMatrixLayout_t> a_layout_;
  LtOwner<cublasLtMatrixLayout_t> b_layout_;
  LtOwner<cublasLtMatrixLayout_t> d_layout_;
  cublasLtMatmulAlgo_t algo_{};
  float alpha_ = 1.0f;  // host pointer mode: read when cublasLtMatmul is called
  float beta_ = 0.0f;
};

}  // namespace parasim::kernels::detail
