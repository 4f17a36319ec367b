#pragma once
// parasim::strat The operations of one inverse 4th root computation (Shampoo, DASH), in the order
// the Python implementations issue them, fed to an EagerIssue (costmodel/eager_issue.hpp).
//
// Sources of the sequences (read, not copied): Distributed Shampoo's coupled Newton and eigen
// roots (facebookresearch/optimizers, matrix_functions.py: `_matrix_inverse_root_newton`,
// `_matrix_root_eigen`) and DASH's batched versions (IST-DASLab/ISTA-DASLab-Optimizers,
// dash/invertors/inv_cn.py, inv_ndb.py; seed-papers.md 4.3). Per factor (or per stack when
// batched), p = 4:
//   scaling    Frobenius: one norm reduction and two scalar ops; power iteration (DASH): 10 steps
//              of an n x n x 16 bf16 GEMM and two small normalising ops, then three more ops.
//   coupled    setup: ridge add, scaling, X = z^(1/p) I, M = z A (3 elementwise ops);
//   Newton     per iteration: M' = (1 - a) I + a M (mul, add), X = X M', M = M'^4 M (M'^2, then
//              two products: three GEMMs), error = ||M - I||_inf (sub, reduction), the test
//              `error < tol` read back on the host (a sync, every iteration, in both
//              implementations); fp16/bf16 (DASH): X M' stays fp32, M and M' are cast down (two
//              casts) and the three M products run in 16 bits. Then the result copy.
//              9 ops (4 GEMMs) + 1 sync per iteration in fp32, 11 ops + 1 sync in 16 bits.
//   Newton-DB  two chained runs (square root, then inverse square root of it), no host sync;
//              per run: A / c, E = -A/2, E += 1.5 I (diagonal), Y = A E (GEMM), Z = E; then k - 1
//              times: E = Z Y (GEMM), E *= -1/2, E += 1.5 I, tmp = Y E (GEMM), Y = tmp,
//              tmp = E Z (GEMM), Z = tmp (7 ops, 3 GEMMs; 16-bit runs add one cast of E); then
//              the unscaled copy (2 ops).
//   Chebyshev  S = 2A/scale - I (2 ops); degree - 1 Clenshaw steps of one GEMM and two
//              elementwise ops (DASH's inv_cbshv.py was not read: the step count is the
//              algorithm's, the two elementwise ops an estimate).
//   EVD        eigh (one op whose GPU time is the tridiagonal-reduction estimate of
//              optimizer_shampoo.hpp, followed by the host check of its info, a sync), then
//              min, the shift, pow, Q * L and (Q L) Q^T (5 ops, 1 GEMM).
// The early exit of coupled Newton at ||M - I|| < tol is not modelled: `iterations` run.
// Elementwise ops move n^2 fp32 elements: 8 bytes each for unary (read, write), 12 for binary,
// 4 for a reduction, 6 for a cast to 16 bits; scalar ops have no body.

#include "costmodel/cost_model.hpp"
#include "costmodel/eager_issue.hpp"
#include "strategies/scenario.hpp"

namespace parasim::strat {

// Issues the inverse roots of `count` factors of n x n: one batched sequence over the stack when
// `stacked`, else the sequence once per factor. `matmul` is the dtype of the solver's matmuls
// (TF32 for fp32 with allow_tf32), `fp32` that of its fp32 matmuls.
void issue_inverse_roots(const OptimizerSpec& o, const cost::CostModel& costs, int n, int count,
                         bool stacked, cost::Dtype matmul, cost::Dtype fp32,
                         cost::EagerIssue& issue);

// GPU time of one EVD of an n x n fp32 matrix (no launch overhead): the tridiagonal reduction
// as n memory-bound column steps reading n^3/3 fp32 elements in all, each with a kernel launch
// of cuSOLVER's own (issued from C++, so they are GPU-side time here), plus 6 n^3 FLOPs of
// GEMM-like work. An assumption standing for cuSOLVER's latency-bound sytrd, not a measurement.
sim::Time evd_body(const cost::CostModel& costs, int n, cost::Dtype fp32);

}  // namespace parasim::strat
