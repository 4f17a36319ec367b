#pragma once
// The reference the calibrate tests compare solvers with: A^(-1/p) from Eigen's
// SelfAdjointEigenSolver, written out here rather than through inverse_root_evd so that the
// reference is independent of the code under test.
#include <doctest/doctest.h>

#include <Eigen/Dense>

namespace parasim::test {

inline Eigen::MatrixXd eigen_reference(const Eigen::MatrixXd& a, int p) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(a);
  REQUIRE(eig.info() == Eigen::Success);
  const Eigen::VectorXd powered = eig.eigenvalues().array().pow(-1.0 / static_cast<double>(p));
  return eig.eigenvectors() * powered.asDiagonal() * eig.eigenvectors().transpose();
}

inline double relative_error(const Eigen::MatrixXd& x, const Eigen::MatrixXd& reference) {
  return (x - reference).norm() / reference.norm();
}

}  // namespace parasim::test
