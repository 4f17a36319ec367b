#pragma once
// parasim::strat Shampoo and DASH optimizer-step cost (Distributed Shampoo, Shi et al. 2023,
// arXiv 2309.06497; DASH, arXiv 2602.02016).
//
// Blocks: every 2-D weight matrix a GPU holds is cut into blocks of at most B x B (full blocks and
// remainders); a block b1 x b2 has factors L (b1 x b1) and R (b2 x b2). Blocks are spread over the
// data-parallel ranks by greedy load balance (largest first onto the least loaded rank): block by
// block for Distributed Shampoo, layer by layer for DASH (its layers are the unit it stacks).
// Per step, on the most loaded rank:
//   factor update  L = b L + (1 - b) G G^T, R likewise (fp32 GEMMs; TF32 with optimizer.allow_tf32);
//   inverse roots  every f steps (amortised: / f), the op sequences of inverse_root_ops.hpp
//                  (solver ops, host syncs such as coupled Newton's convergence test, Distributed
//                  Shampoo's per-factor finite checks). When the profile has measured solver
//                  stacks, each stack of c factors n x n takes CostModel::measured_solver_time(
//                  solver, n, c, iterations, precision, batched = DASH) as the GPU time of its
//                  solver ops (scaling included), which are still issued by the host;
//   precondition   L^-1/4 G R^-1/4 (two GEMMs per block) and Adam grafting (memory-bound);
//   communication  all-gather of the fp32 updates over the data-parallel group.
// Execution: both optimizers are eager PyTorch loops, so the step is one EagerIssue
// (costmodel/eager_issue.hpp): every op costs the host optimizer.host_op_overhead + the device's
// launch overhead, kernel bodies run on the GPU once issued, syncs drain it; the parts are read
// off its clock. Distributed Shampoo issues GEMMs and root sequences per block or factor and its
// elementwise state updates as torch._foreach_* calls; DASH issues everything per stack (layer
// stacking: one stack per layer and block size; GPU stacking: one per block size for the whole
// GPU), so its host cost and syncs are few and its batched GEMMs fill the GPU.

#include <string>
#include <vector>

#include "costmodel/cost_model.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::strat {

struct ShampooStepCost {
  sim::Time factor_update;
  sim::Time inverse_roots;      // per step (amortised over the precondition frequency)
  sim::Time precondition;       // preconditioning and grafting
  double update_bytes = 0;      // all-gather message (nccl-tests S): the stage's fp32 updates
  double state_bytes = 0;       // factors and roots this rank owns, fp32
  int blocks = 0;               // blocks of the stage (all ranks)
  int factors_on_rank = 0;      // factors of the most loaded rank
  int host_ops = 0;    // ops the host issues per step on that rank: kernel launches, device-to-
                      // host copies, scalar ops (roots amortised)
  int host_syncs = 0;  // host reads of a device value per step (roots amortised)
};

// Blocks the weights of `stage` are cut into (the `blocks` of its ShampooStepCost), in closed
// form without listing them: for the workload limits, before the step is costed block by block.
double shampoo_block_count(const Scenario& scenario, int stage);

// Cost of one optimizer step of `stage` (0..pp-1) for Shampoo or DASH on the most loaded
// data-parallel rank. The scenario's optimizer must be shampoo or dash.
ShampooStepCost shampoo_step_cost(const Scenario& scenario, const cost::CostModel& costs,
                                  int stage);

}  // namespace parasim::strat
