#pragma once
// parasim::kernels internal: the matrix-product solvers of kernels/solver_bench.hpp on a device
// stack — the per-block scale c (Frobenius norm, multi-power-iteration), Newton-DB, coupled
// Newton and Chebyshev — each a fixed sequence of launches (no convergence test, nothing read
// back), so the same object serves the batched mode (one solve of N blocks) and the per-block
// mode (N solves of one block, reusing a one-block workspace, as successive blocks reuse the
// caching allocator's buffers in Distributed Shampoo).
//
// Iteration forms and scalings follow calibrate/inverse_root.hpp and calibrate/chebyshev.hpp
// exactly (sources there: Higham 2008 ch. 6-7; Guo & Higham 2006; DASH arXiv 2602.02016
// inv_ndb.py, inv_cn.py, inv_cbshv.py, scalers.py; Clenshaw 1955), except that the iteration
// count is fixed: Newton-DB skips the last run's final Z Y product, as DASH's loop does.

#include <cstddef>
#include <vector>

#include "kernels/cuda_resources.cuh"
#include "kernels/solver_bench.hpp"
#include "kernels/solver_context.cuh"

namespace parasim::kernels::detail {

// The per-block scale c of A (see solver_bench.hpp): ||A||_F, or min(||A||_F, safety x
// estimate) with the estimate from kSolverPowerSteps power steps of kSolverPowerVectors vectors
// started, for every block, from the same unit columns as calib::spectral_norm_estimate's
// (std::mt19937_64 seeded with kSolverScalingSeed, column by column, top 53 bits to [-1, 1)).
class BlockScaler {
 public:
  BlockScaler(const SolverContext& context, GpuDtype dtype, int block, int capacity);
  // Enqueues the scales of `count` <= capacity blocks of `a`; returns them (count fp32 on the
  // device, valid until the next compute()).
  const float* compute(const SolverContext& context, const void* a, int count, GpuScaling scaling,
                       float safety);

 private:
  GpuDtype dtype_;
  int block_;
  int chunks_;
  DeviceBuffer start_;     // capacity x B x vectors, unit columns (storage type)
  DeviceBuffer vectors_;   // capacity x B x vectors (storage type)
  DeviceBuffer products_;  // capacity x B x vectors (storage type)
  DeviceBuffer partials_;  // capacity x chunks fp32
  DeviceBuffer estimate_;  // capacity fp32
  DeviceBuffer scales_;    // capacity fp32
};

// Newton-DB, coupled Newton or Chebyshev for one request, with workspace for `capacity` blocks.
class IterativeRoot {
 public:
  IterativeRoot(const SolverContext& context, const SolverRequest& request, int capacity);
  // Enqueues root_b = A_b^(-1/p) for `count` <= capacity blocks (stacks of the request's dtype;
  // root must not overlap a).
  void solve(const SolverContext& context, const void* a, void* root, int count);

 private:
  void newton_db(const SolverContext& context, const void* a, void* root, int count,
                 const float* scales);
  void coupled_newton(const SolverContext& context, const void* a, void* root, int count,
                      const float* scales);
  void chebyshev(const SolverContext& context, const void* a, void* root, int count,
                 const float* scales);

  SolverRequest request_;
  int capacity_;
  BlockScaler scaler_;
  std::size_t stack_bytes_;  // one workspace stack (capacity blocks)
  std::vector<DeviceBuffer> stacks_;
  std::vector<double> coefficients_;  // Chebyshev
};

}  // namespace parasim::kernels::detail
