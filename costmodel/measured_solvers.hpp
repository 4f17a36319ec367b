#pragma once
// parasim::cost measured solver times — inverse-root solver stacks (a version 2 profile's
// "measurements.solvers", measured_tables.hpp) scaled to the stacks a Shampoo/DASH step runs.
//
// For a query (solver, block B, batch N, iterations I, dtype, batched), among the points of the
// same solver, dtype and batched flag, the nearest point P is the one closest in the space
// (3 ln B, ln N, ln I) (ln I left out for "evd", which has no iterations; the weights are the
// exponents of the scaling below, so "nearest" means "least scaled"; ties go to the point that
// comes first in the table). Then
//     time = P.median x (N / P.batch) x (B / P.block)^3 x (I / P.iterations)
// with the last factor only for the iterative solvers (newton-db, coupled-newton, chebyshev):
// the work of an inverse root is B^3 per matmul, matmuls per iteration are fixed, and a stack of N
// blocks does N times the work (linear in N: measured stacks are large enough to fill the GPU;
// smaller stacks are then pessimistic). Exact at a measured point.
// Extrapolated: when B, N or I lies outside [min, max] over the candidate points (the caller
// warns). The measured time includes the calibrator's scaling step (power iteration by default;
// kernels/solver_bench.hpp), so it replaces scaling plus iterations of the analytical model.

#include <optional>
#include <string_view>
#include <vector>

#include "costmodel/measured_tables.hpp"

namespace parasim::cost {

struct SolverQuery {
  std::string_view solver;  // "newton-db", "coupled-newton", "chebyshev", "evd"
  int block = 0;            // >= 1
  int batch = 0;            // >= 1
  int iterations = 0;       // >= 1 for the iterative solvers; ignored for "evd"
  Dtype dtype = Dtype::kFp32;
  bool batched = true;
};

struct SolverEstimate {
  double seconds = 0;
  const SolverPoint* from = nullptr;  // the point scaled
  bool extrapolated = false;
};

// true for "newton-db", "coupled-newton", "chebyshev".
bool is_iterative_solver(std::string_view solver);

// std::nullopt when no point has the query's solver, dtype and batched flag. Throws
// std::invalid_argument for a block or batch < 1, or iterations < 1 for an iterative solver.
std::optional<SolverEstimate> estimate_solver_time(const std::vector<SolverPoint>& points,
                                                   const SolverQuery& query);

}  // namespace parasim::cost
