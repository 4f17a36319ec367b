#include "calibrate/chebyshev.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace parasim::calib {

std::vector<double> chebyshev_coefficients(const std::function<double(double)>& f, double lo,
                                           double hi, int degree, int nodes) {
  if (!(lo < hi) || degree < 0 || nodes <= degree) {
    throw std::invalid_argument("chebyshev_coefficients: need lo < hi, 0 <= degree < nodes");
  }
  const double n = static_cast<double>(nodes);
  std::vector<double> theta(static_cast<std::size_t>(nodes));
  std::vector<double> values(static_cast<std::size_t>(nodes));
  for (int j = 0; j < nodes; ++j) {
    const auto sj = static_cast<std::size_t>(j);
    theta[sj] = std::numbers::pi * (static_cast<double>(j) + 0.5) / n;
    values[sj] = f(0.5 * (hi - lo) * std::cos(theta[sj]) + 0.5 * (hi + lo));
  }
  std::vector<double> c(static_cast<std::size_t>(degree) + 1, 0.0);
  for (int k = 0; k <= degree; ++k) {
    double sum = 0.0;
    for (int j = 0; j < nodes; ++j) {
      const auto sj = static_cast<std::size_t>(j);
      sum += values[sj] * std::cos(static_cast<double>(k) * theta[sj]);
    }
    c[static_cast<std::size_t>(k)] = 2.0 * sum / n;
  }
  c[0] *= 0.5;
  return c;
}

double clenshaw(const std::vector<double>& c, double t) {
  double b1 = 0.0;  // b_{k+1}
  double b2 = 0.0;  // b_{k+2}
  for (std::size_t k = c.size(); k-- > 1;) {
    const double b = 2.0 * t * b1 - b2 + c[k];
    b2 = b1;
    b1 = b;
  }
  return c.empty() ? 0.0 : t * b1 - b2 + c[0];
}

Eigen::MatrixXd clenshaw(const std::vector<double>& c, const Eigen::MatrixXd& s, int* matmuls) {
  const Eigen::Index n = s.rows();
  int count = 0;
  Eigen::MatrixXd result;
  const std::size_t d = c.empty() ? 0 : c.size() - 1;
  if (c.empty()) {
    result = Eigen::MatrixXd::Zero(n, n);
  } else if (d == 0) {
    result = c[0] * Eigen::MatrixXd::Identity(n, n);
  } else if (d == 1) {
    result = c[1] * s;  // b_1 = c_1 I, b_2 = 0: S b_1 - b_2 + c_0 I
    result.diagonal().array() += c[0];
  } else {
    // b_{k+2} = c_d I (as a scalar multiple of I), b_{k+1} = 2 c_d S + c_{d-1} I.
    Eigen::MatrixXd b2 = c[d] * Eigen::MatrixXd::Identity(n, n);
    Eigen::MatrixXd b1 = (2.0 * c[d]) * s;
    b1.diagonal().array() += c[d - 1];
    Eigen::MatrixXd b(n, n);
    for (std::size_t k = d - 1; k-- > 1;) {  // k = d-2 .. 1
      b.noalias() = s * b1;
      ++count;
      b *= 2.0;
      b -= b2;
      b.diagonal().array() += c[k];
      b2.swap(b1);  // b2 <- old b1
      b1.swap(b);   // b1 <- new b
    }
    result.noalias() = s * b1;
    ++count;
    result -= b2;
    result.diagonal().array() += c[0];
  }
  if (matmuls != nullptr) {
    *matmuls = count;
  }
  return result;
}

double chebyshev_max_relative_error(const std::vector<double>& c, int p, double lo, double hi,
                                    int samples) {
  if (!(lo > 0.0) || !(lo < hi) || samples < 2 || p < 1) {
    throw std::invalid_argument("chebyshev_max_relative_error: need 0 < lo < hi, samples >= 2");
  }
  double worst = 0.0;
  for (int i = 0; i < samples; ++i) {
    const double frac = static_cast<double>(i) / static_cast<double>(samples - 1);
    const double x = i == samples - 1 ? hi : lo * std::pow(hi / lo, frac);
    const double t = std::clamp((2.0 * x - lo - hi) / (hi - lo), -1.0, 1.0);
    const double exact = std::pow(x, -1.0 / static_cast<double>(p));
    worst = std::max(worst, std::abs(clenshaw(c, t) / exact - 1.0));
  }
  return worst;
}

RootResult inverse_root_chebyshev(const Eigen::MatrixXd& a, int p, int degree, Scaling scaling,
                                  double condition_cap) {
  if (a.rows() != a.cols() || a.rows() == 0) {
    throw std::invalid_argument("inverse_root_chebyshev: matrix must be square and non-empty");
  }
  if (p < 1 || degree < 0 || !(condition_cap > 1.0)) {
    throw std::invalid_argument(
        "inverse_root_chebyshev: need p >= 1, degree >= 0, condition_cap > 1");
  }
  const double c = scale_estimate(a, scaling, kChebyshevSpectralSafety);
  const double inv_p = 1.0 / static_cast<double>(p);
  const double lo = 1.0 / condition_cap;
  const auto f = [inv_p](double x) { return std::pow(x, -inv_p); };
  const std::vector<double> coeffs =
      chebyshev_coefficients(f, lo, 1.0, degree, std::max(kChebyshevFitNodes, degree + 1));

  // S = (2 A / c - (1 + lo) I) / (1 - lo).
  Eigen::MatrixXd s = (2.0 / (c * (1.0 - lo))) * a;
  s.diagonal().array() -= (1.0 + lo) / (1.0 - lo);
  RootResult result;
  result.root = clenshaw(coeffs, s, &result.matmuls);
  result.root *= std::pow(c, -inv_p);
  result.iterations = degree;
  result.residual = chebyshev_max_relative_error(coeffs, p, lo, 1.0);
  result.converged = result.root.allFinite();
  return result;
}

}  // namespace parasim::calib
