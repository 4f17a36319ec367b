// Alpha-beta fit of collective series: relative-error least squares, alpha >= 0.
#include "calibrate/fit.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

using namespace parasim;
using calib::FitPoint;

namespace {

constexpr double kAlpha = 8e-6;        // 8 us
constexpr double kBeta = 1.0 / 180e9;  // 180 GB/s

// 1 KB .. 1 GB in factors of 2 (decimal sizes: the fit does not need powers of 2), each time off
// by a deterministic relative error noise x {-1, 0, +1, -1/2, +1/2} (period 5, so it does not
// alias with the doubling of sizes).
std::vector<FitPoint> synthetic(double noise) {
  std::vector<FitPoint> pts;
  int i = 0;
  for (double s = 1e3; s <= 1e9 * 1.0001; s *= 2, ++i) {
    const double e = noise * (((i * 7) % 5) - 2) / 2.0;
    pts.push_back({s, (kAlpha + kBeta * s) * (1.0 + e)});
  }
  return pts;
}

}  // namespace

TEST_CASE("Fit: exact on noiseless data") {
  const auto r = calib::fit_alpha_beta(synthetic(0.0));
  CHECK(r.fit.alpha_s == doctest::Approx(kAlpha).epsilon(1e-10).scale(0));
  CHECK(r.fit.beta_s_per_byte == doctest::Approx(kBeta).epsilon(1e-10).scale(0));
  CHECK(r.max_relative_residual < 1e-10);
}

TEST_CASE("Fit: recovers alpha and beta within 1 % with +-2 % noise over 1 KB .. 1 GB") {
  const auto pts = synthetic(0.02);
  double worst = 0;
  for (const auto& p : pts) {
    worst = std::max(worst, std::abs(p.seconds / (kAlpha + kBeta * p.bytes) - 1));
  }
  REQUIRE(worst == doctest::Approx(0.02).scale(0));  // the noise is really there
  const auto r = calib::fit_alpha_beta(pts);
  CHECK(std::abs(r.fit.alpha_s / kAlpha - 1) < 0.01);
  CHECK(std::abs(r.fit.beta_s_per_byte / kBeta - 1) < 0.01);
  CHECK(r.max_relative_residual < 0.04);
  CHECK(r.max_relative_residual > 0.005);
}

TEST_CASE("Fit: alpha is clamped at 0 and beta refitted") {
  // t = S / B, the smallest point 1 us faster: the unconstrained optimum has alpha < 0.
  std::vector<FitPoint> pts{{1e6, 1e6 / 100e9 - 1e-6}, {1e8, 1e8 / 100e9}, {1e9, 1e9 / 100e9}};
  const auto r = calib::fit_alpha_beta(pts);
  CHECK(r.fit.alpha_s == 0.0);
  CHECK(r.fit.beta_s_per_byte > 0.0);
  CHECK(r.fit.beta_s_per_byte == doctest::Approx(1.0 / 100e9).epsilon(0.05).scale(0));
}

TEST_CASE("Fit: errors on fewer than two points or sizes, and on bad values") {
  CHECK_THROWS_AS(calib::fit_alpha_beta({}), std::invalid_argument);
  CHECK_THROWS_AS(calib::fit_alpha_beta({{1024, 1e-5}}), std::invalid_argument);
  CHECK_THROWS_AS(calib::fit_alpha_beta({{1024, 1e-5}, {1024, 2e-5}}), std::invalid_argument);
  CHECK_THROWS_AS(calib::fit_alpha_beta({{1024, 0.0}, {2048, 2e-5}}), std::invalid_argument);
  CHECK_THROWS_AS(calib::fit_alpha_beta({{-1, 1e-5}, {2048, 2e-5}}), std::invalid_argument);
}

TEST_CASE("fit_series: out-of-place points, in-place only without them; none below two sizes") {
  cost::CollectiveSeries s;
  for (double b = 1024; b <= 1 << 24; b *= 4) {
    const double t = kAlpha + kBeta * b;
    s.points.push_back({cost::Bytes{b}, false, {t, t, t, 10}, true});
    s.points.push_back({cost::Bytes{b}, true, {3 * t, 3 * t, 3 * t, 10}, true});
  }
  const auto fit = calib::fit_series(s);
  REQUIRE(fit);
  CHECK(fit->alpha_s == doctest::Approx(kAlpha).epsilon(1e-9).scale(0));
  std::erase_if(s.points, [](const cost::CollectivePoint& p) { return !p.in_place; });
  CHECK(calib::fit_series(s)->alpha_s == doctest::Approx(3 * kAlpha).epsilon(1e-9).scale(0));
  s.points.resize(1);
  CHECK(!calib::fit_series(s));
}
