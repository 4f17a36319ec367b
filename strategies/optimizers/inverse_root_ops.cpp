#include "strategies/optimizers/inverse_root_ops.hpp"

namespace parasim::strat {
namespace {

constexpr double kUnaryBytes = 8, kBinaryBytes = 12, kReductionBytes = 4, kCastBytes = 6;
constexpr double kBf16ReductionBytes = 2;
constexpr double kFiniteCheckBytes = 5;  // isfinite: fp32 read, bool write
constexpr int kPowerIterationSteps = 10;  // DASH's matrix_scaling_pi_steps
constexpr int kPowerIterationVectors = 16;

// Issues the ops of one sequence over `batch` n x n matrices, with their GPU bodies (no launch).
class RootOps {
 public:
  RootOps(const cost::CostModel& costs, int n, int batch, cost::EagerIssue& issue)
      : costs_(costs), n_(n), batch_(batch), issue_(issue) {}

  // A GEMM n x cols x n per matrix of the batch.
  void gemm(cost::Dtype dtype, std::int64_t cols) {
    const cost::GemmShape s{n_, cols, n_, batch_, dtype};
    issue_.op(costs_.gemm_body(s));
  }
  void gemm(cost::Dtype dtype) { gemm(dtype, n_); }
  // `count` elementwise ops moving `bytes_per_element` per matrix element.
  void elementwise(double bytes_per_element, int count = 1) {
    const double bytes =
        static_cast<double>(n_) * static_cast<double>(n_) * static_cast<double>(batch_) *
        bytes_per_element;
    issue_.repeat(costs_.memory_bound_body(cost::Bytes{bytes}), count);
  }
  // Ops on scalars or on n-element vectors: host cost only.
  void small(int count = 1) { issue_.repeat(sim::Time::zero(), count); }
  void body(sim::Time t) { issue_.op(t); }
  void sync() { issue_.sync(); }

 private:
  const cost::CostModel& costs_;
  std::int64_t n_;
  std::int64_t batch_;
  cost::EagerIssue& issue_;
};

bool sixteen_bit(const OptimizerSpec& spec) { return spec.precision != cost::Dtype::kFp32; }

// DASH's scaler (scalers.py): the bf16 copy, then its norm or multi-power-iteration.
void dash_scaling(const OptimizerSpec& spec, RootOps& ops) {
  ops.elementwise(kCastBytes);
  if (spec.scaling != RootScaling::kPowerIteration) {
    ops.elementwise(kBf16ReductionBytes);
    return;
  }
  ops.small(4);  // diagonal damping, random vectors, their norms, the division
  for (int step = 0; step < kPowerIterationSteps; ++step) {
    ops.gemm(cost::Dtype::kBf16, kPowerIterationVectors);
    ops.small(2);
  }
  ops.gemm(cost::Dtype::kBf16, kPowerIterationVectors);
  ops.small(5);  // Rayleigh quotients, max, gather, cast, safety factor
}

// One coupled-Newton iteration's update of X and M (inv_cn.py; Distributed Shampoo's fp32 loop
// has the same ops).
void coupled_newton_step(const OptimizerSpec& spec, const RootStack& s, RootOps& ops) {
  ops.elementwise(kUnaryBytes);   // a M
  ops.elementwise(kBinaryBytes);  // + (1 - a) I
  ops.gemm(sixteen_bit(spec) ? s.fp32_dtype : s.solver_dtype);  // X M'
  if (sixteen_bit(spec)) ops.elementwise(kCastBytes, 2);           // M, M' cast down
  ops.gemm(s.solver_dtype, s.n);  // M'^2
  ops.gemm(s.solver_dtype, s.n);  // M'^4
  ops.gemm(s.solver_dtype, s.n);  // M'^4 M
  ops.elementwise(kBinaryBytes);     // M - I
  ops.elementwise(kReductionBytes);  // ||.||_inf
}

void shampoo_coupled_newton(const OptimizerSpec& spec, const RootStack& s, RootOps& ops) {
  ops.elementwise(kUnaryBytes);   // identity
  ops.elementwise(kBinaryBytes);  // A + eps I
  ops.elementwise(kReductionBytes);  // ||A||_F
  ops.small(2);                      // z
  ops.small();                       // z^(1/p)
  ops.elementwise(kUnaryBytes, 2);   // X = (.) I, M = z A
  ops.elementwise(kBinaryBytes);     // M - I
  ops.elementwise(kReductionBytes);  // ||.||_inf
  for (int it = 0; it < spec.iterations; ++it) {
    ops.small();  // error > tol
    ops.sync();
    coupled_newton_step(spec, s, ops);
  }
  ops.small();  // error > tol, false: the loop ends
  ops.sync();
  ops.small();  // error <= tol for the convergence flag
  ops.sync();
}

void dash_coupled_newton(const OptimizerSpec& spec, const RootStack& s, RootOps& ops) {
  ops.elementwise(kBinaryBytes);  // A + eps I
  dash_scaling(spec, ops);
  ops.small(2);                     // z, z^(1/p)
  ops.elementwise(kUnaryBytes, 2);  // X, M
  for (int it = 0; it < spec.iterations; ++it) {
    coupled_newton_step(spec, s, ops);
    ops.sync();  // error < tol
  }
  ops.elementwise(kUnaryBytes);  // out = X
}

void newton_db(const OptimizerSpec& spec, const RootStack& s, RootOps& ops) {
  const bool low = sixteen_bit(spec);
  dash_scaling(spec, ops);
  for (int run = 0; run < 2; ++run) {
    if (run == 1) ops.small();        // sqrt of the scale
    ops.elementwise(kUnaryBytes, 2);  // A / c, E = -A/2
    ops.small();                      // E += 1.5 I (diagonal)
    ops.gemm(s.fp32_dtype);           // Y = A E
    if (low) ops.elementwise(kCastBytes);
    ops.elementwise(low ? kCastBytes : kUnaryBytes);  // Z = E
    for (int it = 1; it < spec.iterations; ++it) {
      ops.gemm(s.solver_dtype);  // E = Z Y
      ops.elementwise(kUnaryBytes);
      ops.small();
      if (low) ops.elementwise(kCastBytes);
      ops.gemm(s.solver_dtype);  // tmp = Y E
      ops.elementwise(kUnaryBytes);
      ops.gemm(s.solver_dtype);  // tmp = E Z
      ops.elementwise(kUnaryBytes);
    }
    ops.elementwise(kUnaryBytes, 2);  // out = Y or Z, unscaled
  }
}

void chebyshev(const OptimizerSpec& spec, const RootStack& s, RootOps& ops) {
  const bool low = sixteen_bit(spec);
  dash_scaling(spec, ops);
  ops.small();                      // 2 / scale
  ops.elementwise(kUnaryBytes);     // S = (.) A
  ops.small();                      // S -= I (diagonal)
  ops.elementwise(kUnaryBytes, 2);  // B_d (zeros), B_(d-1) = 2 c_d S
  ops.small(2);                     // their diagonals
  if (low) ops.elementwise(kCastBytes);
  for (int k = 1; k < spec.chebyshev_degree; ++k) {
    if (low) ops.elementwise(kCastBytes);
    ops.gemm(s.solver_dtype);
    ops.elementwise(kUnaryBytes);   // 2 (.)
    ops.elementwise(kBinaryBytes);  // - B_(k+2)
    ops.small();                    // + c_k I
  }
}

void shampoo_evd(const cost::CostModel& costs, const RootStack& s, RootOps& ops) {
  ops.body(costs.evd_body(s.n, s.fp32_dtype));
  ops.sync();  // eigh checks its info on the host
  ops.small(4);
  ops.elementwise(kBinaryBytes);  // Q * L
  ops.gemm(s.fp32_dtype);         // (Q L) Q^T
}

void dash_evd(const cost::CostModel& costs, const RootStack& s, RootOps& ops) {
  ops.elementwise(kBinaryBytes);  // A + eps I
  ops.body(costs.evd_body(s.n, s.fp32_dtype) * s.count);
  ops.sync();
  ops.small(4);                  // heuristic on the eigenvalues, pow
  ops.elementwise(kUnaryBytes / 2);  // diag_embed (a write)
  ops.gemm(s.fp32_dtype);
  ops.gemm(s.fp32_dtype);
  ops.elementwise(kUnaryBytes);  // out = (.)
}

// The solver's own ops over one unit (a factor for Shampoo, the stack for DASH).
void solver(const OptimizerSpec& spec, RootImplementation impl, const RootStack& s,
            const cost::CostModel& costs, RootOps& ops) {
  const bool shampoo = impl == RootImplementation::kDistributedShampoo;
  switch (spec.solver) {
    case RootSolver::kCoupledNewton:
      if (shampoo && !sixteen_bit(spec)) {
        shampoo_coupled_newton(spec, s, ops);
      } else {
        dash_coupled_newton(spec, s, ops);
      }
      break;
    case RootSolver::kNewtonDb: newton_db(spec, s, ops); break;
    case RootSolver::kChebyshev: chebyshev(spec, s, ops); break;
    case RootSolver::kEvd:
      if (shampoo) {
        shampoo_evd(costs, s, ops);
      } else {
        dash_evd(costs, s, ops);
      }
      break;
  }
}

// The solver's ops over one unit, with `measured` as their GPU time when given.
void unit(const OptimizerSpec& spec, RootImplementation impl, const RootStack& s, int batch,
          const cost::CostModel& costs, std::optional<sim::Time> measured,
          cost::EagerIssue& issue) {
  if (!measured) {
    RootOps ops(costs, s.n, batch, issue);
    solver(spec, impl, s, costs, ops);
    return;
  }
  cost::EagerIssue counted(sim::Time::zero());
  RootOps ops(costs, s.n, batch, counted);
  solver(spec, impl, s, costs, ops);
  issue.sequence(*measured, counted.op_count(), counted.sync_count());
}

}  // namespace

void issue_inverse_roots(const OptimizerSpec& spec, RootImplementation implementation,
                         const RootStack& stack, const cost::CostModel& costs,
                         std::optional<sim::Time> measured, cost::EagerIssue& issue) {
  if (implementation == RootImplementation::kDash) {
    unit(spec, implementation, stack, stack.count, costs, measured, issue);
    return;
  }
  // Distributed Shampoo: factor by factor, each wrapped by amortized_computation's checks.
  const std::optional<sim::Time> per_factor =
      measured ? std::optional<sim::Time>(sim::Time::ps(measured->picoseconds() / stack.count))
               : std::nullopt;
  RootOps wrapper(costs, stack.n, 1, issue);
  for (int factor = 0; factor < stack.count; ++factor) {
    wrapper.elementwise(kUnaryBytes);  // factor / bias correction
    wrapper.elementwise(kFiniteCheckBytes);  // isfinite
    wrapper.small();                           // .all()
    wrapper.sync();
    unit(spec, implementation, stack, 1, costs, per_factor, issue);
    wrapper.elementwise(kFiniteCheckBytes);
    wrapper.small();
    wrapper.sync();
    wrapper.elementwise(kUnaryBytes);  // copy into place
  }
}

}  // namespace parasim::strat
