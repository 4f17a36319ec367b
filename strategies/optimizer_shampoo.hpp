#pragma once
// parasim::strat Shampoo and DASH optimizer-step cost (Distributed Shampoo, Shi et al. 2023,
// arXiv 2309.06497; DASH, arXiv 2602.02016; seed-papers.md section 4).
//
// Blocks: every 2-D weight matrix a GPU holds is cut into blocks of at most B x B (full blocks and
// remainders); a block b1 x b2 has factors L (b1 x b1) and R (b2 x b2). Blocks are spread over the
// data-parallel ranks by greedy load balance (largest first onto the least loaded rank): block by
// block for Distributed Shampoo, layer by layer for DASH (its layers are the unit it stacks).
// Per step, on the most loaded rank:
//   factor update  L += G G^T, R += G^T G (fp32 GEMMs; TF32 with optimizer.allow_tf32);
//   inverse roots  every f steps (amortised: / f), per factor n x n, from the solver's matmul count:
//                  coupled Newton 4 per iteration (p = 4); Newton-DB two chained runs of
//                  1 + 3 (k - 1) (p = 4 as a square root then an inverse square root); Chebyshev
//                  degree - 1 (Clenshaw); each an n x n x n GEMM at the solver's precision;
//                  Frobenius scaling one memory-bound pass, power-iteration scaling 10 GEMMs of
//                  n x n x 16 (16 vectors, bf16); EVD: a tridiagonal reduction of n memory-bound
//                  column steps (n^3/3 fp32 elements read, one launch each; an assumption standing
//                  for cuSOLVER's latency-bound sytrd) plus 6 n^3 FLOPs of GEMM-like work.
//                  When the profile has measured solver stacks, each stack of c factors n x n
//                  takes CostModel::measured_solver_time(solver, n, c, iterations, precision,
//                  batched = DASH) instead (scaling included; launches counted as above);
//   precondition   L^-1/4 G R^-1/4 (two GEMMs per block) and Adam grafting (memory-bound);
//   communication  all-gather of the fp32 updates over the data-parallel group.
// Execution: Distributed Shampoo launches one kernel per block and matmul; DASH runs one batched
// GEMM per stack (layer stacking: one stack per layer and block size; GPU stacking: one per block
// size for the whole GPU), so small GEMMs fill the GPU and launches are few.

#include <string>
#include <vector>

#include "costmodel/cost_model.hpp"
#include "strategies/scenario.hpp"

namespace parasim::strat {

struct ShampooStepCost {
  sim::Time factor_update;
  sim::Time inverse_roots;      // per step (amortised over the precondition frequency)
  sim::Time precondition;       // preconditioning and grafting
  double update_bytes = 0;      // all-gather message (nccl-tests S): the stage's fp32 updates
  double state_bytes = 0;       // factors and roots this rank owns, fp32
  int blocks = 0;               // blocks of the stage (all ranks)
  int factors_on_rank = 0;      // factors of the most loaded rank
  int kernels = 0;              // launches per step on that rank (roots amortised)
};

// Cost of one optimizer step of `stage` (0..pp-1) for Shampoo or DASH on the most loaded
// data-parallel rank. The scenario's optimizer must be shampoo or dash.
ShampooStepCost shampoo_step_cost(const Scenario& scenario, const cost::CostModel& costs,
                                  int stage);

}  // namespace parasim::strat
