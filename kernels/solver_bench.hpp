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
// cuSOLVER's batched eigensolvers then rebuilds Q diag(lambda^(-1/p)) Q^T: the Jacobi
// cusolverDnSsyevjBatched for B <= 32 (the cuSOLVER documentation limits syevjBatched to
// n <= 32), cusolverDnXsyevBatched for B > 32 (cuSOLVER 11.7.1 / CUDA 12.6 update 2 and later;
// its problem size is limited to B * B * batch <= INT32_MAX, so larger stacks go in several
// calls). Older cuSOLVERs fall back to cusolverDnXsyevd once per block. The eigensolver always
// works in fp32: fp16 / bf16 blocks are widened before it and the root is rounded back after the
// fp32 reconstruction. EVD's time depends on the data (Jacobi sweeps, QR deflation), unlike the
// others.
// Precision: fp32 (CUBLAS_COMPUTE_32F, no TF32), fp16 / bf16 (storage in half precision, FP32
// accumulation: CUBLAS_COMPUTE_32F with half inputs and outputs); the elementwise steps compute
// in fp32 and round to the storage type.
//
// Scaling (per block, on the device, never read back to the host): c = ||A||_F, or
// min(||A||_F, safety x multi-power-iteration estimate) with 16 vectors x 10 steps started from
// the same seeded vectors as calib::spectral_norm_estimate (DASH, arXiv 2602.02016, scalers.py);
// safety 1 for the Newton solvers and 2 for Chebyshev, as calib::scale_estimate.
//
// Matrix products per block (SolverMeasurement::matmuls, each B x B by B x B, 2 B^3 flops;
// the power iteration's B x B by B x 16 products are not counted), k = iterations:
//   Newton-DB, p = 2^m:  m (3k - 2)         (DASH's fixed-step loop: no convergence test)
//   coupled Newton:      k (1 + floor(log2 p) + popcount(p)) - 1   (p = 4: 4k - 1)
//   Chebyshev degree d:  d - 1
//   EVD:                 1 (the reconstruction; plus the eigensolver, ~9 B^3 flops)

#include <cstdint>
#include <vector>

#include "kernels/gemm_bench.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::kernels {

enum class GpuSolver { kNewtonDB, kCoupledNewton, kChebyshev, kEigendecomposition };
const char* gpu_solver_name(GpuSolver solver);  // "newton-db", "coupled-newton", "chebyshev", "evd"

enum class GpuScaling { kFrobenius, kPowerIteration };
const char* gpu_scaling_name(GpuScaling scaling);  // "frobenius", "power-iteration"

struct SolverRequest {
  GpuSolver solver = GpuSolver::kNewtonDB;
  int block = 1024;      // B
  int batch = 32;        // N
  int p = 4;             // inverse p-th root
  int iterations = 10;   // per run (Newton); the degree for Chebyshev; ignored by EVD
  GpuDtype dtype = GpuDtype::kFp32;
  GpuScaling scaling = GpuScaling::kPowerIteration;
  bool batched = true;   // false: block by block
  // Chebyshev only: the polynomial is fitted on [c / condition_cap, c] (calib's default; see
  // calibrate/chebyshev.hpp for why it should be >= c / lambda_min for accuracy).
  double condition_cap = 1e6;
};

struct SolverMeasurement {
  TimingStats time;     // the whole stack
  int matmuls = 0;      // B x B products per block
};

// DASH's multi-power-iteration (the same numbers and seed as calib::kPowerIterationVectors,
// kPowerIterationSteps and kScalingSeed; gpu_solver_test checks they agree).
inline constexpr int kSolverPowerVectors = 16;
inline constexpr int kSolverPowerSteps = 10;
inline constexpr std::uint64_t kSolverScalingSeed = 0x5eed'da5bULL;
// Safety factors on the power-iteration estimate (calib::kNewtonSpectralSafety and
// calib::kChebyshevSpectralSafety).
inline constexpr double kSolverNewtonSafety = 1.0;
inline constexpr double kSolverChebyshevSafety = 2.0;
// The largest B: B^2 must fit an int32 (46340^2 < 2^31).
inline constexpr int kSolverMaxBlock = 46340;
// measure_solver's blocks: Q diag(lambda) Q^T, lambda geometric from 1 down to 1 / this.
inline constexpr double kSolverTestCondition = 1e3;

// Throws std::invalid_argument unless 1 <= block <= kSolverMaxBlock, batch >= 1, p >= 1
// (Newton-DB: a power of two >= 2), iterations >= 1 (not checked for EVD) and condition_cap > 1
// (Chebyshev). Every function below calls it first, in every build.
void check_solver_request(const SolverRequest& request);

// The matmul count above for a valid request (what SolverMeasurement::matmuls reports).
int solver_matmuls(const SolverRequest& request);

// Times the solver on a stack of seeded SPD blocks (geometric spectrum, condition 1e3; Q from
// the Householder QR of a seeded uniform matrix, built on the device and not timed). One sample
// is the whole stack: one pass of batched launches, or N passes of per-block launches (every
// block reusing one block's workspace), between two CUDA events on one stream, after
// options.warmup untimed passes; with options.flush_l2 a buffer of twice the L2 size is
// overwritten before each sample (outside the events). EVD's sample includes copying A into its
// work buffer (the eigensolver overwrites its input).
// Throws std::invalid_argument (bad request, options.iterations < 1 or warmup < 0),
// GpuUnavailable (built without CUDA, no device, `device` out of range) or GpuError (a CUDA,
// cuBLAS or cuSOLVER call failed, out of memory, the eigensolver did not converge).
SolverMeasurement measure_solver(const SolverRequest& request, const TimingOptions& options,
                                 int device = 0);

// For the GPU tests: runs the solver once on the given blocks (N x B x B row-major doubles,
// converted to the request's dtype) and returns the roots as doubles, same layout. Throws like
// measure_solver, and std::invalid_argument when blocks.size() != N B B.
std::vector<double> run_solver(const SolverRequest& request, const std::vector<double>& blocks,
                               int device = 0);

}  // namespace parasim::kernels
