#pragma once
// parasim::kernels batched inverse-root solvers — DASH's solvers on GPU over stacks of N
// symmetric positive definite B x B blocks, (N, B, B) row-major contiguous, so that every matrix
// product of an iteration is one strided-batched GEMM over the whole stack
// (cublasGemmStridedBatchedEx); the per-block mode runs the same iteration one block at a time
// (one launch per block and product), as Distributed Shampoo does, for the batched-vs-per-block
// comparison of issue 7.
//
// The iterations are those of the CPU references (calibrate/inverse_root.hpp,
// calibrate/chebyshev.hpp, calibrate/power_iteration.hpp): Newton-DB (p = 4 as two chained
// runs), coupled Newton, Chebyshev (Clenshaw), multi-power-iteration scaling; with a FIXED number
// of iterations (no convergence test: DASH's loop), so the time is deterministic. EVD runs
// cuSOLVER's batched Jacobi eigensolver (cusolverDnXsyevBatched when available, syevjBatched
// otherwise) then rebuilds Q diag(lambda^(-1/p)) Q^T.
// Precision: fp32 (FP32 compute), fp16 / bf16 (storage in half precision, FP32 accumulation).

#include <cstdint>
#include <vector>

#include "kernels/gemm_bench.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::kernels {

enum class GpuSolver { kNewtonDB, kCoupledNewton, kChebyshev, kEigendecomposition };
const char* gpu_solver_name(GpuSolver solver);  // "newton-db", "coupled-newton", "chebyshev", "evd"

enum class GpuScaling { kFrobenius, kPowerIteration };

struct SolverRequest {
  GpuSolver solver = GpuSolver::kNewtonDB;
  int block = 1024;      // B
  int batch = 32;        // N
  int p = 4;             // inverse p-th root
  int iterations = 10;   // per run (Newton); the degree for Chebyshev; ignored by EVD
  GpuDtype dtype = GpuDtype::kFp32;
  GpuScaling scaling = GpuScaling::kPowerIteration;
  bool batched = true;   // false: block by block
};

struct SolverMeasurement {
  TimingStats time;     // the whole stack
  int matmuls = 0;      // B x B products per block
};

// Times the solver on a stack of seeded SPD blocks (geometric spectrum, condition 1e3).
SolverMeasurement measure_solver(const SolverRequest& request, const TimingOptions& options,
                                 int device = 0);

// For the GPU tests: runs the solver once on the given blocks (N x B x B row-major doubles,
// converted to the request's dtype) and returns the roots as doubles, same layout.
std::vector<double> run_solver(const SolverRequest& request, const std::vector<double>& blocks,
                               int device = 0);

}  // namespace parasim::kernels
