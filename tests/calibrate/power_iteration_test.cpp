// Tests of the multi-power-iteration spectral-norm estimate (calibrate/power_iteration.hpp).
#include "calibrate/power_iteration.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "calibrate/inverse_root.hpp"

using namespace parasim::calib;

TEST_CASE("seeded_uniform_matrix is deterministic, in [-1, 1), and follows mt19937_64") {
  const Eigen::MatrixXd m = seeded_uniform_matrix(40, 30, 42);
  CHECK(m == seeded_uniform_matrix(40, 30, 42));
  CHECK(m != seeded_uniform_matrix(40, 30, 43));
  CHECK(m.minCoeff() >= -1.0);
  CHECK(m.maxCoeff() < 1.0);
  CHECK(std::abs(m.mean()) < 0.05);
  // The standard fixes mt19937_64's first output for the default seed 5489:
  // 14514284786278117030. The entry is its top 53 bits mapped to [-1, 1).
  const std::uint64_t first = 14514284786278117030ULL;
  const double expected = static_cast<double>(first >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  CHECK(seeded_uniform_matrix(1, 1, 5489)(0, 0) == expected);
  // Column-major fill: a wider matrix starts with the same columns.
  CHECK(seeded_uniform_matrix(3, 2, 5489).col(0) == seeded_uniform_matrix(3, 1, 5489));
  CHECK(seeded_uniform_matrix(0, 3, 1).size() == 0);
  CHECK_THROWS_AS(seeded_uniform_matrix(-1, 3, 1), std::invalid_argument);
}

TEST_CASE("spectral_norm_estimate is a lower bound close to lambda_max on SPD test matrices") {
  // With DASH's 16 vectors x 10 steps in double the estimate is within a few percent of
  // lambda_max even at n = 512 (the top of a geometric spectrum is tightly clustered there).
  std::printf("\n  power iteration, 16 vectors x 10 steps: estimate / lambda_max\n");
  for (Eigen::Index n : {16, 64, 256, 512}) {
    for (double condition : {1e2, 1e6}) {
      const Eigen::VectorXd lambda = geometric_spectrum(n, 2.5, condition);
      const Eigen::MatrixXd a = spd_with_spectrum(lambda, 900 + static_cast<std::uint64_t>(n));
      const double estimate =
          spectral_norm_estimate(a, kPowerIterationVectors, kPowerIterationSteps, 11);
      std::printf("  n=%-4td cond=%.0e  %.5f\n", n, condition, estimate / 2.5);
      CAPTURE(n);
      CAPTURE(condition);
      CHECK(estimate <= 2.5 * (1.0 + 1e-12));
      CHECK(estimate >= 0.95 * 2.5);
      CHECK(estimate <= a.norm());
      // More steps never hurt for an SPD matrix (Rayleigh quotients increase with the step).
      CHECK(spectral_norm_estimate(a, kPowerIterationVectors, 40, 11) >= estimate);
    }
  }
}

TEST_CASE("spectral_norm_estimate: seeds, separated spectra, indefinite and zero matrices") {
  const Eigen::MatrixXd a = spd_with_spectrum(geometric_spectrum(64, 1.0, 1e3), 5);
  CHECK(spectral_norm_estimate(a, 16, 10, 1) == spectral_norm_estimate(a, 16, 10, 1));
  CHECK(spectral_norm_estimate(a, 16, 10, 1) ==
        doctest::Approx(spectral_norm_estimate(a, 16, 10, 2)).epsilon(0.05).scale(0));

  // A well separated top eigenvalue (ratio 1/4) is found to rounding in a few steps.
  Eigen::VectorXd lambda = geometric_spectrum(32, 1.0, 1e4);
  lambda(0) = 4.0;
  const Eigen::MatrixXd separated = spd_with_spectrum(lambda, 6);
  CHECK(spectral_norm_estimate(separated, 4, 30, 3) ==
        doctest::Approx(4.0).epsilon(1e-12).scale(0));

  // Symmetric indefinite: the estimate is |lambda| of largest magnitude, here a negative one.
  Eigen::VectorXd mixed = geometric_spectrum(24, 1.0, 1e2);
  mixed(3) = -5.0;
  const Eigen::MatrixXd indefinite = spd_with_spectrum(mixed, 8);
  CHECK(spectral_norm_estimate(indefinite, 16, 60, 4) ==
        doctest::Approx(5.0).epsilon(1e-9).scale(0));

  CHECK(spectral_norm_estimate(Eigen::MatrixXd::Zero(5, 5), 16, 10, 1) == 0.0);
  CHECK(spectral_norm_estimate(Eigen::MatrixXd::Identity(1, 1) * 3.0, 1, 1, 1) ==
        doctest::Approx(3.0).scale(0));

  CHECK_THROWS_AS(spectral_norm_estimate(Eigen::MatrixXd(2, 3), 16, 10, 1), std::invalid_argument);
  CHECK_THROWS_AS(spectral_norm_estimate(Eigen::MatrixXd(0, 0), 16, 10, 1), std::invalid_argument);
  CHECK_THROWS_AS(spectral_norm_estimate(a, 0, 10, 1), std::invalid_argument);
  CHECK_THROWS_AS(spectral_norm_estimate(a, 16, 0, 1), std::invalid_argument);
}
