#pragma once
// parasim::calib power iteration — the spectral-norm estimate that DASH uses to scale a
// preconditioner block before an inverse-root solve, and the seeded random matrices the
// calibration references and their tests are built from.
//
// Source: DASH (Distributed Accelerated SHampoo), arXiv 2602.02016, and its code
// (IST-DASLab/ISTA-DASLab-Optimizers, dash/invertors/scalers.py,
// max_eigval_power_iter_multi): 16 random vectors iterated in parallel ("multi-power-iteration")
// for 10 steps, the estimate is the largest Rayleigh quotient over the vectors. DASH runs it in
// bf16 and multiplies the result by a safety factor 2; this reference runs in double and leaves
// the safety factor to the caller (see inverse_root.hpp, scale_estimate).
//
// Invariants:
//   * Deterministic: the same (matrix, vectors, steps, seed) gives the same bits on every
//     platform. Random numbers come from std::mt19937_64, whose output sequence the C++ standard
//     fixes, turned into doubles by bit arithmetic (no std::*_distribution, whose algorithms are
//     implementation-defined).
//   * For a symmetric matrix every Rayleigh quotient lies in [lambda_min, lambda_max], so the
//     estimate never exceeds the spectral norm: it is a lower bound that converges to it from
//     below.

#include <Eigen/Core>
#include <cstdint>

namespace parasim::calib {

// DASH's defaults for the multi-power-iteration (scalers.py, dash_config.py).
inline constexpr int kPowerIterationVectors = 16;
inline constexpr int kPowerIterationSteps = 10;

// A rows x cols matrix with entries uniform in [-1, 1), drawn column by column from
// std::mt19937_64 seeded with `seed`. Precondition: rows >= 0, cols >= 0.
Eigen::MatrixXd seeded_uniform_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed);

// Estimate of ||A||_2 for a symmetric matrix A by multi-power-iteration:
//   V_0 = seeded_uniform_matrix(n, vectors, seed) with unit columns;
//   for s = 1..steps: W = A V_{s-1}, rq_s = diag(V_{s-1}^T W), V_s = W with unit columns;
//   result = max over s and columns of |rq_s| (one product with A per step, `steps` in all).
// For a symmetric positive semi-definite A the Rayleigh quotients of a column never decrease with
// s, so the maximum is the last step's, as in DASH (which spends one extra product on it).
// Returns 0 for a zero matrix (a column that A maps to zero stays zero and contributes 0).
// Throws std::invalid_argument unless A is square and non-empty, vectors >= 1 and steps >= 1.
double spectral_norm_estimate(const Eigen::MatrixXd& a, int vectors, int steps, std::uint64_t seed);

}  // namespace parasim::calib
