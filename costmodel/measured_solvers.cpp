#include "costmodel/measured_solvers.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace parasim::cost {

bool is_iterative_solver(std::string_view solver) {
  return solver == "newton-db" || solver == "coupled-newton" || solver == "chebyshev";
}

std::optional<SolverEstimate> estimate_solver_time(const std::vector<SolverPoint>& points,
                                                   const SolverQuery& q) {
  const bool iterative = is_iterative_solver(q.solver);
  if (q.block < 1 || q.batch < 1 || (iterative && q.iterations < 1)) {
    throw std::invalid_argument("solver time of " + std::string(q.solver) +
                                ": block and batch must be >= 1 (and iterations, when iterative)");
  }
  auto log_ratio = [](double a, double b) { return std::log(a / b); };
  const SolverPoint* best = nullptr;
  double best_d2 = 0;
  bool inside[3] = {false, false, false};  // some point at or below, and some at or above: range
  bool below[3] = {false, false, false}, above[3] = {false, false, false};
  for (const SolverPoint& p : points) {
    if (p.solver != q.solver || p.dtype != q.dtype || p.batched != q.batched) continue;
    if (p.block < 1 || p.batch < 1 || (iterative && p.iterations < 1)) continue;
    const double db = 3.0 * log_ratio(q.block, p.block);
    const double dn = log_ratio(q.batch, p.batch);
    const double di = iterative ? log_ratio(q.iterations, p.iterations) : 0.0;
    const double d2 = db * db + dn * dn + di * di;
    if (best == nullptr || d2 < best_d2) {
      best = &p;
      best_d2 = d2;
    }
    const int mine[3] = {q.block, q.batch, iterative ? q.iterations : 0};
    const int theirs[3] = {p.block, p.batch, iterative ? p.iterations : 0};
    for (int i = 0; i < 3; ++i) {
      below[i] = below[i] || theirs[i] <= mine[i];
      above[i] = above[i] || theirs[i] >= mine[i];
    }
  }
  if (best == nullptr) return std::nullopt;
  for (int i = 0; i < 3; ++i) inside[i] = below[i] && above[i];
  SolverEstimate e;
  e.from = best;
  e.extrapolated = !(inside[0] && inside[1] && inside[2]);
  const double block_ratio = static_cast<double>(q.block) / best->block;
  e.seconds = best->time.median_s * (static_cast<double>(q.batch) / best->batch) * block_ratio *
              block_ratio * block_ratio;
  if (iterative) e.seconds *= static_cast<double>(q.iterations) / best->iterations;
  return e;
}

}  // namespace parasim::cost
