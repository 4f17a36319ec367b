#include "calibrate/fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace parasim::calib {
namespace {

void check(const std::vector<FitPoint>& points) {
  if (points.size() < 2) {
    throw std::invalid_argument("alpha-beta fit: needs at least two points, got " +
                                std::to_string(points.size()));
  }
  std::set<double> sizes;
  for (const FitPoint& p : points) {
    if (!(p.bytes >= 0) || !std::isfinite(p.bytes)) {
      throw std::invalid_argument("alpha-beta fit: sizes must be finite and >= 0");
    }
    if (!(p.seconds > 0) || !std::isfinite(p.seconds)) {
      throw std::invalid_argument("alpha-beta fit: times must be finite and > 0");
    }
    sizes.insert(p.bytes);
  }
  if (sizes.size() < 2) {
    throw std::invalid_argument("alpha-beta fit: needs at least two distinct sizes");
  }
}

}  // namespace

AlphaBetaFit fit_alpha_beta(const std::vector<FitPoint>& points) {
  check(points);
  const auto n = static_cast<Eigen::Index>(points.size());
  double s_max = 0;
  for (const FitPoint& p : points) s_max = std::max(s_max, p.bytes);
  Eigen::MatrixXd a(n, 2);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const FitPoint& p = points[static_cast<std::size_t>(i)];
    a(i, 0) = 1.0 / p.seconds;
    a(i, 1) = p.bytes / s_max / p.seconds;
  }
  const Eigen::Vector2d x = a.colPivHouseholderQr().solve(ones);
  double alpha = x(0);
  double beta = x(1) / s_max;
  if (alpha < 0) {
    // Best beta with alpha = 0: minimise sum (beta r_i - 1)^2, r_i = S_i / t_i.
    double num = 0, den = 0;
    for (const FitPoint& p : points) {
      const double r = p.bytes / p.seconds;
      num += r;
      den += r * r;
    }
    alpha = 0;
    beta = num / den;
  } else if (beta < 0) {
    // Best alpha with beta = 0: minimise sum (alpha / t_i - 1)^2.
    double num = 0, den = 0;
    for (const FitPoint& p : points) {
      num += 1.0 / p.seconds;
      den += 1.0 / (p.seconds * p.seconds);
    }
    alpha = num / den;
    beta = 0;
  }
  AlphaBetaFit out;
  out.fit = cost::AlphaBeta{alpha, beta};
  for (const FitPoint& p : points) {
    out.max_relative_residual = std::max(out.max_relative_residual,
                                         std::fabs(alpha + beta * p.bytes - p.seconds) / p.seconds);
  }
  return out;
}

std::optional<cost::AlphaBeta> fit_series(const cost::CollectiveSeries& series) {
  const bool any_out_of_place = std::any_of(series.points.begin(), series.points.end(),
                                            [](const auto& p) { return !p.in_place; });
  std::vector<FitPoint> points;
  std::set<double> sizes;
  for (const auto& p : series.points) {
    if (p.in_place == any_out_of_place) continue;
    points.push_back({p.message.value, p.time.median_s});
    sizes.insert(p.message.value);
  }
  if (sizes.size() < 2) return std::nullopt;
  return fit_alpha_beta(points).fit;
}

}  // namespace parasim::calib
