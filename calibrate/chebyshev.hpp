#pragma once
// parasim::calib Chebyshev inverse root — a fixed-degree polynomial approximation of A^(-1/p)
// evaluated with Clenshaw's recurrence, as in DASH, plus the scalar pieces (coefficient fit,
// scalar Clenshaw, a-priori error) that let the tests and the cost model reason about it.
//
// Sources: DASH, arXiv 2602.02016, and IST-DASLab/ISTA-DASLab-Optimizers
// dash/invertors/inv_cbshv.py (cosine fit on 10,000 Chebyshev nodes of x^(-1/p) on
// [eps, 1 + eps], S = 2 A / c - I, Clenshaw with d - 1 products); C. W. Clenshaw, "A note on
// the summation of Chebyshev series", Math. Comp. 9, 1955; N. J. Higham, "Functions of
// Matrices", SIAM 2008, section 4.4 (polynomial evaluation of matrix functions).
//
// Interval: the polynomial is fitted on [c / condition_cap, c], c the scale (an upper bound on
// lambda_max), mapped to t in [-1, 1]. Outside it |T_k(t)| = cosh(k acosh |t|) grows fast.
// Eigenvalues above c are fatal: at degree 60 an eigenvalue 4% above c (t = 1.08) is amplified
// ~1e10; hence the safety factor 2 on the power-iteration estimate. Eigenvalues below
// c / condition_cap land in [-1 - 2 / (cap - 1), -1], where |T_d| <= cosh(~2 d / sqrt(cap)):
// harmless (relative error at most about one) when cap >> 4 d^2 (cap 1e6, d 60: factor 1.007),
// catastrophic when the cap is small (cap 2 with eigenvalues at c / 20: ~1e27).
// DASH instead fits x^(-1/p) on [eps, 1 + eps] (eps = 1e-10 by default) and evaluates it at
// A / c, i.e. approximates the regularized (A / c + eps I)^(-1/p), and does not rescale by
// c^(-1/p) (grafting removes the scale); we fit the unshifted root on a chosen interval so that
// the only error is the polynomial's.
//
// Accuracy (read before using): a degree-d polynomial approximates x^(-1/p) on an interval of
// ratio kappa = condition_cap with relative error falling roughly like rho^(-d),
// rho = (sqrt(kappa) + 1) / (sqrt(kappa) - 1), i.e. about 5.8 sqrt(kappa) degrees per 1e-5.
// Degree 60 reaches ~1e-5 only up to kappa ~ 1e2; at kappa ~ 1e6 its error is of order one.
// The measured numbers are in docs/inverse-roots.md and chebyshev_test.cpp.
//
// Invariants: coefficients are the plain-sum convention f(t) ~ sum_k c_k T_k(t) (c_0 already
// halved, as DASH stores them); the matrix evaluation of degree d uses max(d - 1, 0) products.

#include <Eigen/Core>
#include <functional>
#include <vector>

#include "calibrate/inverse_root.hpp"

namespace parasim::calib {

// DASH's node count for the cosine fit, and its Chebyshev degree in the paper's runs.
inline constexpr int kChebyshevFitNodes = 10'000;
inline constexpr int kChebyshevDegree = 60;
// Safety factor on the power-iteration estimate for Chebyshev (DASH's): a polynomial, unlike
// the Newton iterations, diverges quickly above its interval, so c must bound lambda_max.
inline constexpr double kChebyshevSpectralSafety = 2.0;
// Default ratio of the fit interval [c / cap, c].
inline constexpr double kChebyshevConditionCap = 1e6;

// c_0..c_degree of the degree-`degree` Chebyshev fit of f on [lo, hi] by the cosine fit on
// `nodes` Chebyshev points of the first kind: theta_j = pi (j + 1/2) / N, t_j = cos theta_j,
// x_j = (hi - lo) t_j / 2 + (hi + lo) / 2, c_k = (2 / N) sum_j f(x_j) cos(k theta_j), c_0 / 2.
// With N = degree + 1 this is the interpolant at the nodes; with N >> degree (DASH: 10,000) it
// is the truncated Chebyshev series up to aliasing. A polynomial of degree <= degree < N is
// reproduced exactly (up to rounding). Throws std::invalid_argument unless lo < hi,
// degree >= 0 and nodes > degree.
std::vector<double> chebyshev_coefficients(const std::function<double(double)>& f, double lo,
                                           double hi, int degree, int nodes = kChebyshevFitNodes);

// sum_k c_k T_k(t) by Clenshaw's recurrence; t in [-1, 1] maps to [lo, hi]. Empty c gives 0.
double clenshaw(const std::vector<double>& c, double t);

// sum_k c_k T_k(S) by Clenshaw's recurrence b_k = 2 S b_{k+1} - b_{k+2} + c_k I, result
// S b_1 - b_2 + c_0 I; b_d and b_{d-1} are formed without products, so degree d >= 1 costs
// d - 1 products (degree 0 none). If `matmuls` is not null it receives that count.
Eigen::MatrixXd clenshaw(const std::vector<double>& c, const Eigen::MatrixXd& s,
                         int* matmuls = nullptr);

// max over `samples` points x of [lo, hi] (geometrically spaced, ends included) of
// |q(x) / x^(-1/p) - 1|, q the Chebyshev series c on [lo, hi]: the eigenvalue-wise relative
// error bound of the matrix polynomial for a spectrum inside [lo, hi]. Requires 0 < lo < hi,
// samples >= 2.
double chebyshev_max_relative_error(const std::vector<double>& c, int p, double lo, double hi,
                                    int samples = 2'000);

// Chebyshev inverse root (DASH's CBSHV). c = scale_estimate(A, scaling,
// kChebyshevSpectralSafety) (||A||_F, or min(||A||_F, 2 x power-iteration estimate));
// coefficients of x^(-1/p) on [lo, 1], lo = 1 / condition_cap (units of c);
// S = (2 A / c - (1 + lo) I) / (1 - lo) maps [lo c, c] onto [-1, 1]; root = c^(-1/p) q(S).
// Choose condition_cap >= c / lambda_min for full accuracy (see above for what happens below).
// iterations = degree, matmuls = max(degree - 1, 0), residual = chebyshev_max_relative_error
// on [lo, 1] (the eigenvalue-wise error bound for a spectrum inside the interval), converged =
// the root is finite. Throws std::invalid_argument for p < 1, degree < 0, condition_cap <= 1
// or a bad matrix.
RootResult inverse_root_chebyshev(const Eigen::MatrixXd& a, int p, int degree, Scaling scaling,
                                  double condition_cap = kChebyshevConditionCap);

}  // namespace parasim::calib
