#include "calibrate/inverse_root.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "calibrate/power_iteration.hpp"

namespace parasim::calib {

namespace {

void check_square(const Eigen::MatrixXd& a, const char* who) {
  if (a.rows() != a.cols() || a.rows() == 0) {
    throw std::invalid_argument(std::string(who) + ": matrix must be square and non-empty");
  }
}

void check_iteration_args(double tolerance, int max_iterations, const char* who) {
  if (!(tolerance > 0.0)) {
    throw std::invalid_argument(std::string(who) + ": tolerance must be > 0");
  }
  if (max_iterations < 0) {
    throw std::invalid_argument(std::string(who) + ": max_iterations must be >= 0");
  }
}

// p = 2^m with m >= 1, or 0 if p is not such a power.
int log2_of_power_of_two(int p) {
  if (p < 2 || !std::has_single_bit(static_cast<unsigned>(p))) {
    return 0;
  }
  return std::countr_zero(static_cast<unsigned>(p));
}

// ||I - t||_F, computed entry by entry (||t||^2 - 2 tr t + n would cancel catastrophically).
double distance_to_identity(const Eigen::MatrixXd& t) {
  double sum = 0.0;
  for (Eigen::Index j = 0; j < t.cols(); ++j) {
    for (Eigen::Index i = 0; i < t.rows(); ++i) {
      const double d = t(i, j) - (i == j ? 1.0 : 0.0);
      sum += d * d;
    }
  }
  return std::sqrt(sum);
}

// One Newton-Schulz (inverse-free Denman-Beavers) run on x: y -> x^(1/2), z -> x^(-1/2).
struct SqrtRun {
  Eigen::MatrixXd y;
  Eigen::MatrixXd z;
  int iterations = 0;
  int matmuls = 0;
  double residual = 0.0;
  bool converged = false;
};

SqrtRun newton_schulz_run(const Eigen::MatrixXd& x, double tolerance, int max_iterations) {
  const Eigen::Index n = x.rows();
  SqrtRun run;
  run.y = x;
  run.z = Eigen::MatrixXd::Identity(n, n);
  Eigen::MatrixXd t = x;  // Z Y
  Eigen::MatrixXd e(n, n);
  Eigen::MatrixXd tmp(n, n);
  for (;;) {
    run.residual = distance_to_identity(t);
    if (!std::isfinite(run.residual)) {
      break;
    }
    if (run.residual <= tolerance) {
      run.converged = true;
      break;
    }
    if (run.iterations == max_iterations) {
      break;
    }
    e = -0.5 * t;
    e.diagonal().array() += 1.5;
    if (run.iterations == 0) {  // Y_0 = X, Z_0 = I: Y_1 = X E, Z_1 = E
      run.y.noalias() = x * e;
      run.z = e;
      run.matmuls += 1;
    } else {
      tmp.noalias() = run.y * e;
      run.y.swap(tmp);
      tmp.noalias() = e * run.z;
      run.z.swap(tmp);
      run.matmuls += 2;
    }
    ++run.iterations;
    t.noalias() = run.z * run.y;
    run.matmuls += 1;
  }
  return run;
}

// Scalar images of the recursions, used by predicted_iterations.
double newton_schulz_map(double t) {
  return t * (3.0 - t) * (3.0 - t) / 4.0;
}

double coupled_newton_map(double m, int p) {
  return m * std::pow((static_cast<double>(p) + 1.0 - m) / static_cast<double>(p), p);
}

// Image of [lo, hi] under a map that increases on (0, 1], decreases after 1 and peaks at 1.
void map_interval(double& lo, double& hi, double f_lo, double f_hi) {
  const double new_lo = std::min(f_lo, f_hi);
  const double new_hi = (lo <= 1.0 && 1.0 <= hi) ? 1.0 : std::max(f_lo, f_hi);
  lo = new_lo;
  hi = new_hi;
}

double interval_residual(double lo, double hi) {
  return std::max(1.0 - lo, hi - 1.0);
}

// Predicted updates of one Newton-DB run on [lo, hi], or -1. On return lo and hi hold the
// run's y on the interval ends (the spectrum of the next chained run).
int predict_newton_schulz_run(double& lo, double& hi, double tolerance, int max_iterations) {
  double t_lo = lo, t_hi = hi;  // z y at the ends
  double y_lo = lo, y_hi = hi;
  double z_lo = 1.0, z_hi = 1.0;
  int k = 0;
  while (interval_residual(t_lo, t_hi) > tolerance) {
    if (k == max_iterations) {
      return -1;
    }
    const double e_lo = 1.5 - 0.5 * z_lo * y_lo;
    const double e_hi = 1.5 - 0.5 * z_hi * y_hi;
    y_lo *= e_lo;
    z_lo *= e_lo;
    y_hi *= e_hi;
    z_hi *= e_hi;
    map_interval(t_lo, t_hi, newton_schulz_map(t_lo), newton_schulz_map(t_hi));
    ++k;
  }
  lo = std::min(y_lo, y_hi);
  hi = std::max(y_lo, y_hi);
  return k;
}

}  // namespace

double scale_estimate(const Eigen::MatrixXd& a, Scaling scaling, double spectral_safety) {
  check_square(a, "scale_estimate");
  if (!(spectral_safety > 0.0)) {
    throw std::invalid_argument("scale_estimate: safety factor must be > 0");
  }
  double c = a.norm();
  if (scaling == Scaling::kSpectral) {
    const double estimate =
        spectral_norm_estimate(a, kPowerIterationVectors, kPowerIterationSteps, kScalingSeed);
    c = std::min(c, spectral_safety * estimate);
  }
  if (!(c > 0.0) || !std::isfinite(c)) {
    throw std::invalid_argument("scale_estimate: the scale is zero or not finite");
  }
  return c;
}

RootResult inverse_root_evd(const Eigen::MatrixXd& a, int p, double epsilon) {
  check_square(a, "inverse_root_evd");
  if (p < 1) {
    throw std::invalid_argument("inverse_root_evd: p must be >= 1");
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(a);
  if (eig.info() != Eigen::Success) {
    throw std::domain_error("inverse_root_evd: eigendecomposition failed");
  }
  Eigen::VectorXd shifted = eig.eigenvalues().array() + epsilon;
  if (!(shifted.minCoeff() > 0.0)) {
    throw std::domain_error("inverse_root_evd: eigenvalue + epsilon <= 0");
  }
  const Eigen::VectorXd powered = shifted.array().pow(-1.0 / static_cast<double>(p));
  RootResult result;
  result.root.noalias() =
      (eig.eigenvectors() * powered.asDiagonal()) * eig.eigenvectors().transpose();
  result.converged = true;
  result.matmuls = 1;
  return result;
}

RootResult inverse_root_newton_db(const Eigen::MatrixXd& a, int p, Scaling scaling,
                                  double tolerance, int max_iterations) {
  check_square(a, "inverse_root_newton_db");
  const int runs = log2_of_power_of_two(p);
  if (runs == 0) {
    throw std::invalid_argument("inverse_root_newton_db: p must be a power of two >= 2");
  }
  check_iteration_args(tolerance, max_iterations, "inverse_root_newton_db");
  const double c = scale_estimate(a, scaling);

  RootResult result;
  result.converged = true;
  Eigen::MatrixXd x = a / c;  // spectrum of X^(1/2^r) before run r
  for (int r = 1; r <= runs; ++r) {
    SqrtRun run = newton_schulz_run(x, tolerance, max_iterations);
    result.iterations += run.iterations;
    result.matmuls += run.matmuls;
    result.residual = run.residual;
    result.converged = result.converged && run.converged;
    if (r < runs) {
      x = 0.5 * (run.y + run.y.transpose());  // (A/c)^(1/2^r), symmetrized
    } else {
      // Z = (A/c)^(-1/p)  =>  A^(-1/p) = c^(-1/p) Z.
      result.root = std::pow(c, -1.0 / static_cast<double>(p)) * run.z;
    }
  }
  return result;
}

RootResult inverse_root_coupled_newton(const Eigen::MatrixXd& a, int p, Scaling scaling,
                                       double tolerance, int max_iterations) {
  check_square(a, "inverse_root_coupled_newton");
  if (p < 1) {
    throw std::invalid_argument("inverse_root_coupled_newton: p must be >= 1");
  }
  check_iteration_args(tolerance, max_iterations, "inverse_root_coupled_newton");
  const double c = scale_estimate(a, scaling);
  const double pd = static_cast<double>(p);
  const double alpha = -1.0 / pd;
  const double z = (pd + 1.0) / (2.0 * c);
  const Eigen::Index n = a.rows();

  RootResult result;
  Eigen::MatrixXd m = z * a;
  Eigen::MatrixXd x;  // X_0 = z^(1/p) I stays implicit until the first update
  const double x0 = std::pow(z, 1.0 / pd);
  Eigen::MatrixXd mp(n, n);
  Eigen::MatrixXd power(n, n);
  Eigen::MatrixXd square(n, n);
  Eigen::MatrixXd tmp(n, n);
  for (;;) {
    result.residual = distance_to_identity(m);
    if (!std::isfinite(result.residual)) {
      break;
    }
    if (result.residual <= tolerance) {
      result.converged = true;
      break;
    }
    if (result.iterations == max_iterations) {
      break;
    }
    mp = alpha * m;
    mp.diagonal().array() += 1.0 - alpha;
    if (result.iterations == 0) {
      x = x0 * mp;
    } else {
      tmp.noalias() = x * mp;
      x.swap(tmp);
      result.matmuls += 1;
    }
    // power = M'^p by repeated squaring (bits of p from the lowest), then M = power M.
    bool have_power = false;
    square = mp;
    for (unsigned bits = static_cast<unsigned>(p);;) {
      if ((bits & 1U) != 0U) {
        if (have_power) {
          tmp.noalias() = power * square;
          power.swap(tmp);
          result.matmuls += 1;
        } else {
          power = square;
          have_power = true;
        }
      }
      bits >>= 1U;
      if (bits == 0U) {
        break;
      }
      tmp.noalias() = square * square;
      square.swap(tmp);
      result.matmuls += 1;
    }
    tmp.noalias() = power * m;
    m.swap(tmp);
    result.matmuls += 1;
    ++result.iterations;
  }
  result.root =
      result.iterations == 0 ? Eigen::MatrixXd(x0 * Eigen::MatrixXd::Identity(n, n)) : std::move(x);
  return result;
}

int predicted_iterations(Solver solver, double lo, double hi, int p, double tolerance,
                         int max_iterations) {
  if (!(lo > 0.0) || !(hi >= lo)) {
    throw std::invalid_argument("predicted_iterations: need 0 < lo <= hi");
  }
  check_iteration_args(tolerance, max_iterations, "predicted_iterations");
  switch (solver) {
    case Solver::kNewtonDB: {
      const int runs = log2_of_power_of_two(p);
      if (runs == 0) {
        throw std::invalid_argument("predicted_iterations: Newton-DB needs p = 2^m >= 2");
      }
      if (hi >= 3.0) {
        return -1;
      }
      int total = 0;
      for (int r = 0; r < runs; ++r) {
        const int k = predict_newton_schulz_run(lo, hi, tolerance, max_iterations);
        if (k < 0) {
          return -1;
        }
        total += k;
      }
      return total;
    }
    case Solver::kCoupledNewton: {
      if (p < 1) {
        throw std::invalid_argument("predicted_iterations: p must be >= 1");
      }
      if (hi >= 2.0) {
        return -1;
      }
      const double z = (static_cast<double>(p) + 1.0) / 2.0;
      double m_lo = z * lo;
      double m_hi = z * hi;
      int k = 0;
      while (interval_residual(m_lo, m_hi) > tolerance) {
        if (k == max_iterations) {
          return -1;
        }
        map_interval(m_lo, m_hi, coupled_newton_map(m_lo, p), coupled_newton_map(m_hi, p));
        ++k;
      }
      return k;
    }
    case Solver::kEigendecomposition:
    case Solver::kChebyshev:
      break;
  }
  throw std::invalid_argument("predicted_iterations: only Newton-DB and coupled Newton iterate");
}

Eigen::VectorXd geometric_spectrum(Eigen::Index n, double lambda_max, double condition) {
  if (n < 1 || !(lambda_max > 0.0) || !(condition >= 1.0)) {
    throw std::invalid_argument("geometric_spectrum: need n >= 1, lambda_max > 0, condition >= 1");
  }
  Eigen::VectorXd lambda(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double frac = n == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(n - 1);
    lambda(i) = lambda_max * std::pow(condition, -frac);
  }
  return lambda;
}

Eigen::MatrixXd spd_with_spectrum(const Eigen::VectorXd& eigenvalues, std::uint64_t seed) {
  const Eigen::Index n = eigenvalues.size();
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(seeded_uniform_matrix(n, n, seed));
  const Eigen::MatrixXd q = qr.householderQ();
  Eigen::MatrixXd a = (q * eigenvalues.asDiagonal()) * q.transpose();
  return 0.5 * (a + a.transpose());
}

}  // namespace parasim::calib
