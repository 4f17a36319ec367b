#pragma once
// parasim::kernels Chebyshev fit — the coefficients the GPU Chebyshev solver evaluates, computed
// on the host (plain C++17, both builds). parasim_kernels does not link parasim_calibrate, so
// this re-derives calib::chebyshev_coefficients for the one function the solver needs.
//
// Formula (DASH, arXiv 2602.02016, inv_cbshv.py: the cosine fit on N Chebyshev nodes of the
// first kind; Clenshaw 1955; Higham 2008 section 4.4): for f(x) = x^(-1/p) on [lo, 1],
//   theta_j = pi (j + 1/2) / N,  x_j = (1 - lo) cos(theta_j) / 2 + (1 + lo) / 2,
//   c_k = (2 / N) sum_j f(x_j) cos(k theta_j),  c_0 halved,
// so that f(x) ~ sum_k c_k T_k(t), t = (2 x - 1 - lo) / (1 - lo) in [-1, 1]. N = max(10,000,
// degree + 1) as calib (DASH's 10,000 nodes).

#include <vector>

namespace parasim::kernels {

inline constexpr int kChebyshevFitNodes = 10'000;

// c_0 .. c_degree of x^(-1/p) on [lo, 1]. Throws std::invalid_argument unless p >= 1,
// degree >= 0 and 0 < lo < 1.
std::vector<double> inverse_root_chebyshev_coefficients(int p, int degree, double lo);

}  // namespace parasim::kernels
