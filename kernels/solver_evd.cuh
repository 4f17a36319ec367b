#pragma once
// parasim::kernels internal: the eigendecomposition root A^(-1/p) = Q diag(lambda^(-1/p)) Q^T
// on a device stack (Shampoo's and DASH's EVD, inv_evd.py; calib::inverse_root_evd with
// epsilon 0), in fp32 whatever the storage type.
//
// Eigensolver (cuSOLVER documentation, "Dense Eigenvalue Solver Reference"):
//   * B <= 32: cusolverDnSsyevjBatched (batched Jacobi; the documentation limits it to n <= 32),
//     default tolerance (machine precision) and sweep limit (100);
//   * B > 32: cusolverDnXsyevBatched (cuSOLVER >= 11.7.1), whose problem size is limited to
//     n * lda * batchSize <= INT32_MAX, so a stack goes in chunks of at most that many blocks;
//   * B > 32 with an older cuSOLVER: cusolverDnXsyevd once per block.
// The batched and per-block modes run the same routine, with batch N or N calls of batch 1
// (cusolverDnXsyevBatched in its default mode, which may choose its internal algorithm by batch
// size; cusolverDnSetAdvOptions(params, CUSOLVERDN_SYEVBATCHED, CUSOLVER_ALG_1) would pin one).
// Every solve ORs "some info != 0" into a sticky device flag that check() reads.

#include <cusolverDn.h>

#include <vector>

#include "kernels/cuda_resources.cuh"
#include "kernels/solver_bench.hpp"
#include "kernels/solver_context.cuh"

namespace parasim::kernels::detail {

class EvdRoot {
 public:
  EvdRoot(const SolverContext& context, const SolverRequest& request, int capacity);
  ~EvdRoot();
  EvdRoot(const EvdRoot&) = delete;
  EvdRoot& operator=(const EvdRoot&) = delete;

  // Enqueues root_b = A_b^(-1/p) for `count` <= capacity blocks (stacks of the request's
  // dtype). Copying A into the eigensolver's work buffer is part of the solve.
  void solve(const SolverContext& context, const void* a, void* root, int count);
  // Throws GpuError if an eigensolve since construction reported info != 0 (waits for the
  // stream).
  void check(const SolverContext& context) const;

 private:
  void eigensolve(const SolverContext& context, int count);

  SolverRequest request_;
  int capacity_;
  int chunk_ = 0;                         // blocks per cusolverDnXsyevBatched call
  DeviceBuffer vectors_;                  // capacity x B x B fp32: A, then its eigenvectors Q
  DeviceBuffer scaled_;                   // capacity x B x B fp32: Q diag(lambda^(-1/p))
  DeviceBuffer root32_;                   // capacity x B x B fp32 (fp16 / bf16 storage only)
  DeviceBuffer eigenvalues_;              // capacity x B fp32
  DeviceBuffer info_;                     // capacity int
  DeviceBuffer failed_;                   // one int, sticky
  DeviceBuffer work_;                     // eigensolver device workspace
  std::vector<unsigned char> host_work_;  // eigensolver host workspace
  int jacobi_work_ = 0;                   // syevjBatched workspace, in floats
  syevjInfo_t jacobi_ = nullptr;
  cusolverDnParams_t params_ = nullptr;
};

}  // namespace parasim::kernels::detail
