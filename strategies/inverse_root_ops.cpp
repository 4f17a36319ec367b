#include "strategies/inverse_root_ops.hpp"

#include <cmath>

namespace parasim::strat {
namespace {

// Bodies (GPU time without launch overhead) of the ops of one sequence over `batch` matrices.
class RootOps {
 public:
  RootOps(const cost::CostModel& costs, int n, int batch, cost::EagerIssue& issue)
      : costs_(costs), n_(n), batch_(batch), issue_(issue) {}

  void gemm(cost::Dtype dtype, int cols = 0) {
    const std::int64_t n = n_;
    const cost::GemmShape s{n, cols > 0 ? cols : n, n, batch_, dtype};
    issue_.op(costs_.gemm(s) - launch());
  }
  // An elementwise op moving `bytes_per_element` per matrix element.
  void elementwise(double bytes_per_element, int count = 1) {
    const double bytes =
        static_cast<double>(n_) * n_ * static_cast<double>(batch_) * bytes_per_element;
    issue_.ops(costs_.memory_bound(cost::Bytes{bytes}) - launch(), count);
  }
  void scalar(int count = 1) { issue_.ops(sim::Time::zero(), count); }
  void body(sim::Time t) { issue_.op(t); }
  void sync() { issue_.sync(); }

 private:
  sim::Time launch() const { return costs_.device().kernel_launch_overhead; }

  const cost::CostModel& costs_;
  int n_;
  std::int64_t batch_;
  cost::EagerIssue& issue_;
};

constexpr double kUnary = 8, kBinary = 12, kReduction = 4, kCast = 6;

void scaling(const OptimizerSpec& o, RootOps& ops) {
  if (o.scaling == RootScaling::kPowerIteration) {
    for (int step = 0; step < 10; ++step) {
      ops.gemm(cost::Dtype::kBf16, 16);
      ops.scalar(2);
    }
    ops.scalar(3);
  } else {
    ops.elementwise(kReduction);
    ops.scalar(2);
  }
}

void coupled_newton(const OptimizerSpec& o, cost::Dtype matmul, cost::Dtype fp32, RootOps& ops) {
  const bool sixteen_bit = o.precision != cost::Dtype::kFp32;
  ops.elementwise(kBinary);  // ridge
  scaling(o, ops);
  ops.elementwise(kUnary, 2);  // X = z^(1/p) I, M = z A
  for (int it = 0; it < o.iterations; ++it) {
    ops.elementwise(kUnary);   // a M
    ops.elementwise(kBinary);  // + (1 - a) I
    ops.gemm(sixteen_bit ? fp32 : matmul);  // X M'
    if (sixteen_bit) ops.elementwise(kCast, 2);
    ops.gemm(matmul, 0);  // M'^2
    ops.gemm(matmul, 0);  // M'^2 M'^2 (or M'^2 M)
    ops.gemm(matmul, 0);  // ... M
    ops.elementwise(kBinary);     // M - I
    ops.elementwise(kReduction);  // ||.||_inf
    ops.sync();                   // error < tol
  }
  ops.elementwise(kUnary);  // out = X
}

void newton_db(const OptimizerSpec& o, cost::Dtype matmul, RootOps& ops) {
  const bool sixteen_bit = o.precision != cost::Dtype::kFp32;
  scaling(o, ops);
  for (int run = 0; run < 2; ++run) {
    if (run == 1) ops.scalar();  // sqrt of the scale
    ops.elementwise(kUnary, 2);  // A / c, E = -A/2
    ops.scalar();                // E += 1.5 I (diagonal)
    ops.gemm(matmul);            // Y = A E
    ops.elementwise(sixteen_bit ? kCast : kUnary);  // Z = E
    for (int it = 1; it < o.iterations; ++it) {
      ops.gemm(matmul);  // E = Z Y
      ops.elementwise(kUnary);
      ops.scalar();
      if (sixteen_bit) ops.elementwise(kCast);
      ops.gemm(matmul);
      ops.elementwise(kUnary);
      ops.gemm(matmul);
      ops.elementwise(kUnary);
    }
    ops.elementwise(kUnary, 2);  // out = Y or Z, unscaled
  }
}

void chebyshev(const OptimizerSpec& o, cost::Dtype matmul, RootOps& ops) {
  scaling(o, ops);
  ops.elementwise(kUnary, 2);
  for (int k = 1; k < o.chebyshev_degree; ++k) {
    ops.gemm(matmul);
    ops.elementwise(kBinary, 2);
  }
}

void evd(const cost::CostModel& costs, int n, cost::Dtype fp32, RootOps& ops) {
  ops.body(evd_body(costs, n, fp32));
  ops.sync();  // eigh checks its info on the host
  ops.scalar(3);
  ops.elementwise(kBinary);
  ops.gemm(fp32);
}

}  // namespace

sim::Time evd_body(const cost::CostModel& costs, int n, cost::Dtype fp32) {
  const double nn = n;
  const double read = nn * nn * nn / 3.0 * 4.0;
  const sim::Time column = costs.memory_bound(cost::Bytes{read / nn});  // launch included
  const cost::GemmShape work{n, n, 3 * static_cast<std::int64_t>(n), 1, fp32};
  return column * n + costs.gemm(work) - costs.device().kernel_launch_overhead;
}

void issue_inverse_roots(const OptimizerSpec& o, const cost::CostModel& costs, int n, int count,
                         bool stacked, cost::Dtype matmul, cost::Dtype fp32,
                         cost::EagerIssue& issue) {
  // EVD is not batched in either implementation (one eigh per factor).
  const bool batched = stacked && o.solver != RootSolver::kEvd;
  RootOps ops(costs, n, batched ? count : 1, issue);
  for (int unit = 0; unit < (batched ? 1 : count); ++unit) {
    switch (o.solver) {
      case RootSolver::kCoupledNewton: coupled_newton(o, matmul, fp32, ops); break;
      case RootSolver::kNewtonDb: newton_db(o, matmul, ops); break;
      case RootSolver::kChebyshev: chebyshev(o, matmul, ops); break;
      case RootSolver::kEvd: evd(costs, n, fp32, ops); break;
    }
  }
}

}  // namespace parasim::strat
