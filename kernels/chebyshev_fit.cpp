// The cosine fit of x^(-1/p) (formula and sources in kernels/chebyshev_fit.hpp).

#include "kernels/chebyshev_fit.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>
#include <stdexcept>

namespace parasim::kernels {

std::vector<double> inverse_root_chebyshev_coefficients(int p, int degree, double lo) {
  if (p < 1 || degree < 0 || !(lo > 0.0) || !(lo < 1.0)) {
    throw std::invalid_argument(
        "inverse_root_chebyshev_coefficients: need p >= 1, degree >= 0, 0 < lo < 1");
  }
  const int nodes = std::max(kChebyshevFitNodes, degree + 1);
  const double count = static_cast<double>(nodes);
  const double exponent = -1.0 / static_cast<double>(p);
  std::vector<double> theta(static_cast<std::size_t>(nodes));
  std::vector<double> value(static_cast<std::size_t>(nodes));
  for (std::size_t j = 0; j < theta.size(); ++j) {
    theta[j] = std::numbers::pi * (static_cast<double>(j) + 0.5) / count;
    const double x = 0.5 * (1.0 - lo) * std::cos(theta[j]) + 0.5 * (1.0 + lo);
    value[j] = std::pow(x, exponent);
  }
  std::vector<double> c(static_cast<std::size_t>(degree) + 1);
  for (std::size_t k = 0; k < c.size(); ++k) {
    double sum = 0.0;
    for (std::size_t j = 0; j < theta.size(); ++j) {
      sum += value[j] * std::cos(static_cast<double>(k) * theta[j]);
    }
    c[k] = 2.0 * sum / count;
  }
  c[0] *= 0.5;
  return c;
}

}  // namespace parasim::kernels
