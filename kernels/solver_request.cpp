// Host-only parts of kernels/solver_bench.hpp, the same with or without CUDA: names, request
// validation and the matmul counts (see the header for the formulas and their sources).
#include "kernels/solver_bench.hpp"

#include <bit>
#include <stdexcept>
#include <string>

namespace parasim::kernels {

const char* gpu_solver_name(GpuSolver solver) {
  switch (solver) {
    case GpuSolver::kNewtonDB:
      return "newton-db";
    case GpuSolver::kCoupledNewton:
      return "coupled-newton";
    case GpuSolver::kChebyshev:
      return "chebyshev";
    case GpuSolver::kEigendecomposition:
      return "evd";
  }
  return "unknown";
}

const char* gpu_scaling_name(GpuScaling scaling) {
  switch (scaling) {
    case GpuScaling::kFrobenius:
      return "frobenius";
    case GpuScaling::kPowerIteration:
      return "power-iteration";
  }
  return "unknown";
}

void check_solver_request(const SolverRequest& request) {
  const std::string who = std::string("solver ") + gpu_solver_name(request.solver) + ": ";
  if (request.block < 1 || request.batch < 1) {
    throw std::invalid_argument(
        who + "block and batch must be >= 1 (got B = " + std::to_string(request.block) +
        ", N = " + std::to_string(request.batch) + ")");
  }
  if (request.block > kSolverMaxBlock) {
    throw std::invalid_argument(who + "block must be <= " + std::to_string(kSolverMaxBlock) +
                                " (B^2 must fit an int32: cuBLAS dimensions, kernel indices)");
  }
  if (request.p < 1) {
    throw std::invalid_argument(who + "p must be >= 1");
  }
  if (request.solver == GpuSolver::kNewtonDB &&
      (request.p < 2 || !std::has_single_bit(static_cast<unsigned>(request.p)))) {
    throw std::invalid_argument(who + "p must be a power of two >= 2 (got " +
                                std::to_string(request.p) + ")");
  }
  if (request.solver != GpuSolver::kEigendecomposition && request.iterations < 1) {
    throw std::invalid_argument(who + "iterations (the degree for Chebyshev) must be >= 1");
  }
  if (request.solver == GpuSolver::kChebyshev && !(request.condition_cap > 1.0)) {
    throw std::invalid_argument(who + "condition_cap must be > 1");
  }
}

int solver_matmuls(const SolverRequest& request) {
  check_solver_request(request);
  const int k = request.iterations;
  const auto p = static_cast<unsigned>(request.p);
  switch (request.solver) {
    case GpuSolver::kNewtonDB:
      // One run per factor 2 of p; per run the first update costs 1 product, each later one 2,
      // and every update but the last is followed by the Z Y product the next E needs.
      return std::countr_zero(p) * (3 * k - 2);
    case GpuSolver::kCoupledNewton:
      // X M' (free on the first update), M'^p by repeated squaring, M'^p M.
      return k * (1 + (std::bit_width(p) - 1) + std::popcount(p)) - 1;
    case GpuSolver::kChebyshev:
      return k - 1;
    case GpuSolver::kEigendecomposition:
      return 1;
  }
  return 0;
}

}  // namespace parasim::kernels
