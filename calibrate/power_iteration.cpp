#include "calibrate/power_iteration.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace parasim::calib {

namespace {

// Uniform double in [-1, 1) from the top 53 bits of one 64-bit draw.
double uniform_pm1(std::mt19937_64& engine) {
  // 53 significant bits scaled by 2 / 2^53.
  const auto bits = engine() >> 11;
  return static_cast<double>(bits) * (2.0 / 9007199254740992.0) - 1.0;
}

// Scales every non-zero column of v to unit 2-norm; zero columns stay zero.
void normalize_columns(Eigen::MatrixXd& v) {
  for (Eigen::Index j = 0; j < v.cols(); ++j) {
    const double norm = v.col(j).norm();
    if (norm > 0.0) {
      v.col(j) /= norm;
    }
  }
}

}  // namespace

Eigen::MatrixXd seeded_uniform_matrix(Eigen::Index rows, Eigen::Index cols, std::uint64_t seed) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument("seeded_uniform_matrix: negative dimension");
  }
  std::mt19937_64 engine(seed);
  Eigen::MatrixXd m(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j) {
    for (Eigen::Index i = 0; i < rows; ++i) {
      m(i, j) = uniform_pm1(engine);
    }
  }
  return m;
}

double spectral_norm_estimate(const Eigen::MatrixXd& a, int vectors, int steps,
                              std::uint64_t seed) {
  if (a.rows() != a.cols() || a.rows() == 0) {
    throw std::invalid_argument("spectral_norm_estimate: matrix must be square and non-empty");
  }
  if (vectors < 1 || steps < 1) {
    throw std::invalid_argument("spectral_norm_estimate: vectors and steps must be >= 1");
  }
  Eigen::MatrixXd v = seeded_uniform_matrix(a.rows(), vectors, seed);
  normalize_columns(v);
  Eigen::MatrixXd w(a.rows(), vectors);
  double estimate = 0.0;
  for (int s = 0; s < steps; ++s) {
    w.noalias() = a * v;
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      estimate = std::max(estimate, std::abs(v.col(j).dot(w.col(j))));
    }
    v.swap(w);
    normalize_columns(v);
  }
  return estimate;
}

}  // namespace parasim::calib
