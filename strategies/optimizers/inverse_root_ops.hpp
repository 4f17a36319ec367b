#pragma once
// parasim::strat The operations of inverse 4th root computations (Shampoo, DASH), in the order
// the Python implementations issue them, fed to an EagerIssue (costmodel/eager_issue.hpp).
//
// Sources of the sequences (read, not copied): Distributed Shampoo (facebookresearch/optimizers:
// matrix_functions.py `_matrix_inverse_root_newton`, `_matrix_root_eigen`;
// shampoo_preconditioner_list.py `amortized_computation`) and DASH
// (IST-DASLab/ISTA-DASLab-Optimizers, dash/invertors/: inv_cn.py, inv_ndb.py, inv_cbshv.py,
// inv_evd.py, scalers.py). The paper ran Distributed Shampoo from a fork
// into which DASH's Newton-DB and 16-bit coupled Newton were integrated, so those two use DASH's
// sequences in both implementations. p = 4 throughout.
//
// Distributed Shampoo, per factor: the bias-corrected copy, a finite check read back on the host
// (isfinite, all, sync), the root, a finite check of the result read back, the copy into place.
// DASH, per stack (one sequence over N factors with batched kernels), no such checks.
//
//   scaling      Distributed Shampoo's coupled Newton: the fp32 Frobenius norm and two scalar
//                ops. DASH's scaler (all other solvers): the stack cast to bf16, then either its
//                Frobenius norm, or the diagonal damping and multi-power-iteration: 16 random
//                vectors normalised, kPowerIterationSteps steps of an n x n x 16 bf16 GEMM and
//                two normalising ops, one more GEMM and five ops picking the largest Rayleigh
//                quotient.
//   coupled      Distributed Shampoo: identity, ridge add, scaling, X = z^(1/p) I (two ops),
//   Newton       M = z A, ||M - I||_inf (sub, reduction); then before every iteration and once
//                after the last, the `error > tol` test read back (compare, sync); per
//                iteration M' = (1 - a) I + a M (mul, add), X = X M', M = M'^4 M (three GEMMs),
//                ||M - I||_inf; and the final `error <= tol` read back. 10 ops (4 GEMMs) and one
//                sync per iteration, plus 2 syncs. DASH (and both in 16 bits): ridge add,
//                scaling, X, M; per iteration M' (2 ops), X M' (fp32), in 16 bits two casts
//                down, the three M products, ||M - I||_inf (2 ops) and `error < tol` read back:
//                9 ops (11 in 16 bits) and one sync per iteration; then the result copy.
//   Newton-DB    two chained runs (square root, then inverse square root of it), no sync; per
//                run: A / c, E = -A/2, E += 1.5 I (diagonal), Y = A E (fp32; in 16 bits cast
//                down), Z = E (a copy or a cast); then k - 1 times: E = Z Y (GEMM), E *= -1/2,
//                E += 1.5 I, in 16 bits E cast down, tmp = Y E (GEMM), Y = tmp, tmp = E Z
//                (GEMM), Z = tmp: 7 ops (8 in 16 bits, 3 GEMMs); then the unscaled copy (2 ops).
//   Chebyshev    (DASH) scaling, S = 2A/scale - I (2 ops), B_d and B_(d-1) (3 ops), in 16 bits
//                S cast down; then d - 1 Clenshaw steps: in 16 bits B_(k+1) cast down, S B_(k+1)
//                (GEMM), 2 (.) - B_(k+2) (2 ops), + c_k I (diagonal): 4 ops (5 in 16 bits).
//   EVD          Distributed Shampoo, per factor: eigh (its GPU time is CostModel::evd_body; its info is
//                read back: a sync), min, shift, + eps, pow (scalar-sized ops), Q * L (n^2) and
//                (Q L) Q^T (GEMM). DASH, per stack: ridge add, one batched eigh (N x evd_body,
//                one sync), three ops on the eigenvalues, pow, diag_embed, two batched GEMMs
//                and the copy out.
// Coupled Newton's early exit at ||M - I|| < tol is not modelled: `iterations` run. DASH's Triton
// symmetric product (ns_line_1) is costed as a full GEMM. Elementwise ops move n^2 elements of
// the stack: kUnaryBytes per element (fp32 read and write), kBinaryBytes (two reads, one write),
// kReductionBytes (one read), kCastBytes (fp32 read, 16-bit write); ops on scalars or on n
// eigenvalues have no body.

#include <optional>

#include "costmodel/cost_model.hpp"
#include "costmodel/eager_issue.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::strat {

// Which Python implementation issues the ops.
enum class RootImplementation { kDistributedShampoo, kDash };

struct RootStack {
  int n = 0;                  // factors are n x n
  int count = 0;              // factors in the stack (DASH) or handled one by one (Shampoo)
  cost::Dtype solver_dtype;   // the solver's matmuls (TF32 for fp32 with allow_tf32)
  cost::Dtype fp32_dtype;     // fp32 matmuls (TF32 with allow_tf32)
};

// Issues the inverse roots of `stack` into `issue`: Distributed Shampoo once per factor with its
// per-factor checks, DASH once over the stack. With `measured` (the GPU time of the whole
// stack's roots from a profile, timed from C++ without the framework), the solver's ops are
// still issued and counted but their GPU time is the measured one (EagerIssue::sequence).
void issue_inverse_roots(const OptimizerSpec& spec, RootImplementation implementation,
                         const RootStack& stack, const cost::CostModel& costs,
                         std::optional<sim::Time> measured, cost::EagerIssue& issue);

}  // namespace parasim::strat
