#pragma once
// parasim::calib inverse roots — CPU reference implementations (double, Eigen) of the solvers
// that Shampoo-type optimizers use for A^(-1/p), A symmetric positive definite (SPD): the
// eigendecomposition root, Newton-Denman-Beavers (Newton-DB) and coupled Newton. The Chebyshev
// solver lives in chebyshev.hpp, the power iteration in power_iteration.hpp. These are the
// references the CUDA kernels are checked against, and predicted_iterations gives the cost
// model the solvers' iteration counts. docs/inverse-roots.md explains the choices.
//
// Sources:
//   * N. J. Higham, "Functions of Matrices: Theory and Computation", SIAM 2008, ch. 6 (matrix
//     square root: Denman-Beavers iteration and its inverse-free Newton-Schulz form, their
//     stability) and ch. 7 (p-th roots).
//   * E. D. Denman, A. N. Beavers, "The matrix sign function and computations in systems",
//     Appl. Math. Comput. 2(1), 1976 (the coupled Y/Z square-root iteration).
//   * C.-H. Guo, N. J. Higham, "A Schur-Newton method for the matrix p-th root and its inverse",
//     SIAM J. Matrix Anal. Appl. 28(3), 2006 (coupled Newton for A^(-1/p), convergence region).
//   * DASH, arXiv 2602.02016, and IST-DASLab/ISTA-DASLab-Optimizers dash/invertors (inv_ndb.py,
//     inv_cn.py, inv_evd.py, scalers.py): the exact iteration forms, scaling and matmul counts
//     followed here; coupled Newton as in Distributed Shampoo (matrix_functions.py).
//
// Conventions and invariants:
//   * Inputs are SPD (only assumed, not checked: checking costs an eigendecomposition). A matrix
//     product means one n x n by n x n product (2 n^3 flops); RootResult::matmuls counts them so
//     the cost model can be checked against what a solver really does.
//   * Iterations are counted as updates performed. The convergence test is made before every
//     update (including the first), on the Frobenius norm of the solver's residual matrix R
//     (Newton-DB: I - Z Y; coupled Newton: I - M). ||R||_F >= ||R||_2, so a converged result has
//     spectral residual <= tolerance; the relative error of the root is about ||R|| / p.
//   * A solver that reaches max_iterations, or whose residual stops being finite, returns its
//     last iterate with converged == false; no solver throws on non-convergence.
//   * Every function is deterministic (the spectral scaling uses a fixed power-iteration seed).

#include <Eigen/Core>
#include <cstdint>

namespace parasim::calib {

// How a solver scales A before iterating: A / c with c an estimate of lambda_max(A).
enum class Scaling {
  kFrobenius,  // c = ||A||_F: a guaranteed upper bound on lambda_max, too large by up to sqrt(n)
  kSpectral,   // c = multi-power-iteration estimate of ||A||_2 (x a solver-specific safety factor)
};

enum class Solver { kEigendecomposition, kNewtonDB, kCoupledNewton, kChebyshev };

struct RootResult {
  Eigen::MatrixXd root;    // approximation of A^(-1/p)
  int iterations = 0;      // updates performed (Chebyshev: the degree; EVD: 0)
  double residual = 0.0;   // solver-specific, see each function; 0 when not applicable
  bool converged = false;  // residual <= tolerance (iterative solvers); success otherwise
  int matmuls = 0;         // n x n matrix products performed
};

// Seed of the power iteration behind Scaling::kSpectral.
inline constexpr std::uint64_t kScalingSeed = 0x5eed'da5bULL;
// Safety factor on the power-iteration estimate for the Newton solvers. In double precision 16
// vectors x 10 steps underestimate lambda_max by a few percent at most on the spectra we test,
// and the Newton iterations converge for lambda_max / c < 3 (Newton-DB) and < 2 (coupled
// Newton), so no safety factor is needed. DASH uses 2 (bf16 power iteration), which costs about
// one Newton-DB iteration; predicted_iterations quantifies it.
inline constexpr double kNewtonSpectralSafety = 1.0;

// The scale c for `scaling`: ||A||_F, or min(||A||_F, safety * spectral_norm_estimate(A,
// kPowerIterationVectors, kPowerIterationSteps, kScalingSeed)) for kSpectral (the Frobenius
// norm caps it, being a guaranteed bound). Throws std::invalid_argument for an empty or
// non-square matrix, a safety factor <= 0, or c == 0.
double scale_estimate(const Eigen::MatrixXd& a, Scaling scaling,
                      double spectral_safety = kNewtonSpectralSafety);

// Eigendecomposition root (Shampoo's and DASH's EVD): A = Q diag(lambda) Q^T by Eigen's
// SelfAdjointEigenSolver (reads the lower triangle), root = Q diag((lambda + epsilon)^(-1/p)) Q^T.
// iterations 0, residual 0, matmuls 1 (the reconstruction; the eigensolver itself is ~9 n^3
// flops of other work). Throws std::invalid_argument for p < 1 or a bad matrix, and
// std::domain_error if some lambda + epsilon <= 0 or the eigensolver fails.
RootResult inverse_root_evd(const Eigen::MatrixXd& a, int p, double epsilon = 0.0);

// Newton-DB (DASH's Newton-Denman-Beavers; Higham's inverse-free, "Newton-Schulz" form of the
// Denman-Beavers square-root iteration). For X = A / c (spectrum in (0, 1] when c >= lambda_max):
//   Y_0 = X, Z_0 = I;  repeat  E = (3 I - Z_k Y_k) / 2,  Y_{k+1} = Y_k E,  Z_{k+1} = E Z_k
// so that Y -> X^(1/2), Z -> X^(-1/2) (Y_k = X Z_k throughout); it converges when the spectrum
// of X lies in (0, 3). The first update costs one product (Y_1 = X E, Z_1 = E), later ones two,
// and each convergence test one (Z Y, reused for the next E): 3 products per iteration, 3k - 1
// for a run of k >= 1 updates (DASH's fixed-step loop skips the last test: 1 + 3 (k - 1)).
// p must be a power of two >= 2: p = 2 is one run returning Z / sqrt(c); p = 4 (DASH) chains two
// runs, the square root Y of X then the inverse square root of Y (symmetrized), i.e. the second
// run uses scale sqrt(c), returning c^(-1/4) Z; p = 2^m chains m runs. max_iterations applies to
// each run; iterations and matmuls are summed over the runs, residual is the last run's
// ||I - Z Y||_F and converged requires every run to converge. Throws std::invalid_argument for
// a bad p, matrix, tolerance <= 0 or max_iterations < 0.
RootResult inverse_root_newton_db(const Eigen::MatrixXd& a, int p, Scaling scaling,
                                  double tolerance, int max_iterations);

// Coupled Newton (Guo & Higham 2006; Distributed Shampoo's and DASH's CN). alpha = -1/p,
// z = (p + 1) / (2 c):
//   X_0 = z^(1/p) I, M_0 = z A;  repeat  M' = (1 - alpha) I + alpha M_k,  X_{k+1} = X_k M',
//   M_{k+1} = M'^p M_k
// keeping M_k = X_k^p A, so M -> I and X -> A^(-1/p); it converges when the spectrum of M_0 lies
// in (0, p + 1), i.e. lambda_max / c < 2. Products per iteration: X M' (free on the first, X_0
// being scalar) and M'^p M by repeated squaring: 1 + floor(log2 p) + popcount(p) -> p = 2: 3,
// p = 4: 4 (DASH's count); a run of k >= 1 updates costs that times k, minus 1. The test uses
// M itself, so it costs nothing. residual = ||I - M||_F. Any p >= 1. Throws
// std::invalid_argument like inverse_root_newton_db.
RootResult inverse_root_coupled_newton(const Eigen::MatrixXd& a, int p, Scaling scaling,
                                       double tolerance, int max_iterations);

// Iteration count predicted by the scalar recursion: the matrix iterations act on each
// eigenvalue independently (every iterate is a polynomial in A), so running the scalar
// recursion on the ends of the scaled spectrum [lo, hi] = [lambda_min / c, lambda_max / c] and
// stopping when max over the interval of |1 - r_k| <= tolerance, where r_k is the scalar
// residual (Newton-DB: z_k y_k; coupled Newton: m_k), gives the count k for a matrix whose
// spectral residual is that maximum. The matrix test uses the Frobenius norm (>= spectral), so
// the matrix may need one more iteration than predicted; the tests check agreement within one.
// For Newton-DB with p = 2^m the m chained runs are predicted one after the other (each on the
// image of the previous run's y on the interval ends) and summed; max_iterations is per run.
// Returns -1 if some run does not reach the tolerance within max_iterations, or if [lo, hi] is
// outside the convergence region (Newton-DB hi >= 3, coupled Newton hi >= 2). Throws
// std::invalid_argument for another solver, a bad p, lo <= 0, hi < lo, tolerance <= 0 or
// max_iterations < 0.
int predicted_iterations(Solver solver, double lo, double hi, int p, double tolerance,
                         int max_iterations);

// Test matrices: n eigenvalues spaced geometrically from lambda_max down to
// lambda_max / condition (both included; n == 1 gives {lambda_max}), in decreasing order.
// Throws std::invalid_argument for n < 1, lambda_max <= 0 or condition < 1.
Eigen::VectorXd geometric_spectrum(Eigen::Index n, double lambda_max, double condition);

// Q diag(eigenvalues) Q^T, exactly symmetric, with Q the orthogonal factor of the Householder QR
// of seeded_uniform_matrix(n, n, seed).
Eigen::MatrixXd spd_with_spectrum(const Eigen::VectorXd& eigenvalues, std::uint64_t seed);

}  // namespace parasim::calib
