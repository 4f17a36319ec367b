// Host-side checks of kernels/solver_bench.hpp and kernels/chebyshev_fit.hpp: names, request
// validation, matmul counts and the Chebyshev fit pass in every build, with or without a GPU;
// without CUDA or without a device the measurements throw GpuUnavailable.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/chebyshev_fit.hpp"
#include "kernels/device_probe.hpp"
#include "kernels/gpu_error.hpp"
#include "kernels/solver_bench.hpp"

namespace pk = parasim::kernels;

namespace {

pk::SolverRequest request_for(pk::GpuSolver solver, int p, int iterations) {
  pk::SolverRequest request;
  request.solver = solver;
  request.p = p;
  request.iterations = iterations;
  return request;
}

// sum_k c_k T_k(t) by Clenshaw's recurrence (Clenshaw 1955).
double chebyshev_series(const std::vector<double>& c, double t) {
  double b1 = 0.0;
  double b2 = 0.0;
  for (std::size_t k = c.size() - 1; k >= 1; --k) {
    const double b = 2.0 * t * b1 - b2 + c[k];
    b2 = b1;
    b1 = b;
  }
  return t * b1 - b2 + c[0];
}

}  // namespace

TEST_CASE("solver and scaling names") {
  CHECK(std::string(pk::gpu_solver_name(pk::GpuSolver::kNewtonDB)) == "newton-db");
  CHECK(std::string(pk::gpu_solver_name(pk::GpuSolver::kCoupledNewton)) == "coupled-newton");
  CHECK(std::string(pk::gpu_solver_name(pk::GpuSolver::kChebyshev)) == "chebyshev");
  CHECK(std::string(pk::gpu_solver_name(pk::GpuSolver::kEigendecomposition)) == "evd");
  CHECK(std::string(pk::gpu_scaling_name(pk::GpuScaling::kFrobenius)) == "frobenius");
  CHECK(std::string(pk::gpu_scaling_name(pk::GpuScaling::kPowerIteration)) == "power-iteration");
}

TEST_CASE("solver requests are validated") {
  CHECK_NOTHROW(pk::check_solver_request(pk::SolverRequest{}));
  pk::SolverRequest request;
  request.block = 0;
  CHECK_THROWS_AS(pk::check_solver_request(request), std::invalid_argument);
  request = pk::SolverRequest{};
  request.block = pk::kSolverMaxBlock + 1;
  CHECK_THROWS_AS(pk::check_solver_request(request), std::invalid_argument);
  request = pk::SolverRequest{};
  request.batch = 0;
  CHECK_THROWS_AS(pk::check_solver_request(request), std::invalid_argument);
  // Newton-DB needs p = 2^m >= 2; coupled Newton, Chebyshev and EVD take any p >= 1.
  CHECK_THROWS_AS(pk::check_solver_request(request_for(pk::GpuSolver::kNewtonDB, 3, 10)),
                  std::invalid_argument);
  CHECK_THROWS_AS(pk::check_solver_request(request_for(pk::GpuSolver::kNewtonDB, 1, 10)),
                  std::invalid_argument);
  CHECK_NOTHROW(pk::check_solver_request(request_for(pk::GpuSolver::kNewtonDB, 8, 10)));
  CHECK_NOTHROW(pk::check_solver_request(request_for(pk::GpuSolver::kCoupledNewton, 3, 10)));
  CHECK_THROWS_AS(pk::check_solver_request(request_for(pk::GpuSolver::kCoupledNewton, 0, 10)),
                  std::invalid_argument);
  CHECK_THROWS_AS(pk::check_solver_request(request_for(pk::GpuSolver::kChebyshev, 4, 0)),
                  std::invalid_argument);
  CHECK_NOTHROW(pk::check_solver_request(request_for(pk::GpuSolver::kEigendecomposition, 4, 0)));
  request = request_for(pk::GpuSolver::kChebyshev, 4, 60);
  request.condition_cap = 1.0;
  CHECK_THROWS_AS(pk::check_solver_request(request), std::invalid_argument);
}

TEST_CASE("matmul counts per block follow the fixed-step iterations") {
  // Newton-DB: m runs of 1 + 3 (k - 1) products (DASH's loop).
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kNewtonDB, 2, 10)) == 28);
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kNewtonDB, 4, 10)) == 56);
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kNewtonDB, 4, 1)) == 2);
  // Coupled Newton: (1 + floor(log2 p) + popcount p) per update, the first X M' free.
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kCoupledNewton, 4, 10)) == 39);
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kCoupledNewton, 2, 10)) == 29);
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kCoupledNewton, 3, 1)) == 3);
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kCoupledNewton, 1, 5)) == 9);
  // Chebyshev: degree - 1 (Clenshaw); EVD: the reconstruction.
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kChebyshev, 4, 60)) == 59);
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kChebyshev, 4, 1)) == 0);
  CHECK(pk::solver_matmuls(request_for(pk::GpuSolver::kEigendecomposition, 4, 0)) == 1);
}

TEST_CASE("the Chebyshev fit approximates x^(-1/p) on its interval") {
  // Degree 60 on [1e-2, 1]: DASH's degree, an interval ratio where it is accurate
  // (docs/inverse-roots.md: ~1e-5 relative at ratio 1e2).
  const double lo = 1e-2;
  for (const int p : {2, 4}) {
    const std::vector<double> c = pk::inverse_root_chebyshev_coefficients(p, 60, lo);
    REQUIRE(c.size() == 61);
    double worst = 0.0;
    for (int i = 0; i <= 100; ++i) {
      const double x = lo * std::pow(1.0 / lo, i / 100.0);
      const double t = (2.0 * x - 1.0 - lo) / (1.0 - lo);
      worst = std::max(worst, std::abs(chebyshev_series(c, t) * std::pow(x, 1.0 / p) - 1.0));
    }
    CHECK(worst < 1e-4);
  }
  CHECK_THROWS_AS(pk::inverse_root_chebyshev_coefficients(0, 10, 0.1), std::invalid_argument);
  CHECK_THROWS_AS(pk::inverse_root_chebyshev_coefficients(2, 10, 1.0), std::invalid_argument);
}

TEST_CASE("without CUDA or without a device the solvers throw GpuUnavailable") {
  if (pk::cuda_built() && !pk::probe_devices().devices.empty()) return;
  pk::SolverRequest request;
  request.block = 16;
  request.batch = 2;
  pk::TimingOptions options;
  options.warmup = 0;
  options.iterations = 1;
  CHECK_THROWS_AS(pk::measure_solver(request, options), pk::GpuUnavailable);
  CHECK_THROWS_AS(pk::run_solver(request, std::vector<double>(2 * 16 * 16, 0.0)),
                  pk::GpuUnavailable);
}

TEST_CASE("a bad solver request is std::invalid_argument in every build") {
  pk::SolverRequest request;
  request.p = 3;  // Newton-DB
  CHECK_THROWS_AS(pk::measure_solver(request, pk::TimingOptions{}), std::invalid_argument);
  CHECK_THROWS_AS(pk::run_solver(request, {}), std::invalid_argument);
}
