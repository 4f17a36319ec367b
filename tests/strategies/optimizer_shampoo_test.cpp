// Shampoo and DASH step model (DASH, arXiv 2602.02016; IST-DASLab/ISTA-DASLab-Optimizers): block partition, stacking, solver matmul
// counts from kernel launches.
#include <doctest/doctest.h>

#include "costmodel/cost_model.hpp"
#include "scenario_builder.hpp"
#include "strategies/input/model_presets.hpp"
#include "strategies/optimizers/optimizer_shampoo.hpp"

using namespace parasim;

namespace {

strat::Scenario dash_scenario(strat::OptimizerKind kind, strat::Stacking stacking,
                              strat::RootSolver solver) {
  auto sc = test::small_scenario(8, 1, 1, 8, 1);
  sc.model = strat::find_model_preset("llama-953m")->spec;
  sc.optimizer.kind = kind;
  sc.optimizer.stacking = stacking;
  sc.optimizer.solver = solver;
  sc.optimizer.precision = cost::Dtype::kFp16;
  return sc;
}

}  // namespace

TEST_CASE("Block partition of Llama-953M at B = 1024 (DASH's example: the embedding)") {
  // 32000 x 2048 at B = 1024: 31 full rows of blocks and one of 256 rows, two columns: 62 full
  // blocks and 2 remainders (DASH's stacking, IST-DASLab/DASH). Per layer: Q, K, V, O 2048 x 2048 -> 4 blocks
  // each; gate, up 5632 x 2048 and down 2048 x 5632 -> 6 x 2 = 12 blocks each.
  auto sc = dash_scenario(strat::OptimizerKind::kShampoo, strat::Stacking::kNone,
                          strat::RootSolver::kCoupledNewton);
  const cost::CostModel costs(sc.cluster);
  const auto c = strat::shampoo_step_cost(sc, costs, 0);
  const int per_layer = 4 * 4 + 3 * 12;
  CHECK(c.blocks == 16 * per_layer + 2 * 64);  // 16 layers, embedding and untied head
}

TEST_CASE("Stacking cuts launches; the solvers' matmul counts show in them") {
  auto launches = [](strat::OptimizerKind kind, strat::Stacking stacking, strat::RootSolver solver,
                     int iterations) {
    auto sc = dash_scenario(kind, stacking, solver);
    sc.optimizer.iterations = iterations;
    const cost::CostModel costs(sc.cluster);
    return strat::shampoo_step_cost(sc, costs, 0);
  };
  using K = strat::OptimizerKind;
  using S = strat::Stacking;
  using R = strat::RootSolver;
  const auto shampoo = launches(K::kShampoo, S::kNone, R::kCoupledNewton, 10);
  const auto layer = launches(K::kDash, S::kLayer, R::kCoupledNewton, 10);
  const auto gpu = launches(K::kDash, S::kGpu, R::kCoupledNewton, 10);
  CHECK(gpu.host_ops < layer.host_ops);
  CHECK(layer.host_ops < shampoo.host_ops);
  CHECK(gpu.inverse_roots < shampoo.inverse_roots);
  // Block by block, per factor (inverse_root_ops.hpp): one more 16-bit coupled-Newton iteration
  // issues 11 ops (a M, + I, X M', two casts, three products, M - I, the norm, the read-back
  // copy) and one more host sync.
  const auto cn11 = launches(K::kShampoo, S::kNone, R::kCoupledNewton, 11);
  CHECK(cn11.host_ops - shampoo.host_ops == 11 * shampoo.factors_on_rank);
  CHECK(cn11.host_syncs - shampoo.host_syncs == shampoo.factors_on_rank);
  // Distributed Shampoo reads back `iterations` convergence tests and two finite checks per
  // factor; DASH one test per iteration per stack (GPU stacking: one stack per block size).
  CHECK(shampoo.host_syncs == (10 + 2) * shampoo.factors_on_rank);
  const auto gpu11 = launches(K::kDash, S::kGpu, R::kCoupledNewton, 11);
  CHECK(gpu.host_syncs == 2 * 10);  // two stacks on the busiest rank: 1024 and 256
  CHECK(gpu11.host_syncs - gpu.host_syncs == 2);
  // Newton-DB: two runs of 3 GEMMs, 3 copies or scalings and one diagonal op per iteration, plus
  // the cast of E in 16 bits: one more iteration adds 2 x 8 ops per factor and no sync.
  const auto db10 = launches(K::kShampoo, S::kNone, R::kNewtonDb, 10);
  const auto db11 = launches(K::kShampoo, S::kNone, R::kNewtonDb, 11);
  CHECK(db11.host_ops - db10.host_ops == 16 * db10.factors_on_rank);
  CHECK(db10.host_syncs == 2 * db10.factors_on_rank);  // the finite checks only
  CHECK(launches(K::kDash, S::kGpu, R::kNewtonDb, 10).host_syncs == 0);
  // Every factor's state (factor and root, fp32) is counted on its owner.
  CHECK(shampoo.state_bytes > 0);
}

TEST_CASE("The host cost per op bounds block-by-block Shampoo, not DASH's stacks") {
  // Distributed Shampoo issues tens of thousands of short kernels: at a large host cost per op
  // its step is that cost times the op count (the GPU idles); DASH's few long batched kernels
  // hardly notice (eager_issue.hpp).
  auto scenario = [](strat::OptimizerKind kind, strat::Stacking stacking, double host_us) {
    auto sc = dash_scenario(kind, stacking, strat::RootSolver::kCoupledNewton);
    sc.optimizer.host_op_overhead = sim::Time::us(host_us);
    return sc;
  };
  auto cost = [&](strat::OptimizerKind kind, strat::Stacking stacking, double host_us) {
    const auto sc = scenario(kind, stacking, host_us);
    return strat::shampoo_step_cost(sc, cost::CostModel(sc.cluster), 0);
  };
  using K = strat::OptimizerKind;
  const auto slow = cost(K::kShampoo, strat::Stacking::kNone, 100);
  const double launch_us =
      scenario(K::kShampoo, strat::Stacking::kNone, 100).cluster.device.kernel_launch_overhead.to_seconds() * 1e6;
  // The op count does not depend on the host cost.
  CHECK(slow.host_ops == cost(K::kShampoo, strat::Stacking::kNone, 0).host_ops);
  // Host-bound: every op's host time is on the critical path, the GPU bodies hide behind it.
  // (A foreach call's further launches cost the host only the launch: under 1 % of the ops.)
  const double host_bound_s = slow.host_ops * (100 + launch_us) * 1e-6;
  const double step_s = (slow.factor_update + slow.inverse_roots + slow.precondition).to_seconds();
  CHECK(step_s > host_bound_s * 0.99);
  CHECK(step_s < host_bound_s * 1.05);
  const auto dash_fast = cost(K::kDash, strat::Stacking::kGpu, 0);
  const auto dash_slow = cost(K::kDash, strat::Stacking::kGpu, 100);
  const double dash_fast_s = dash_fast.inverse_roots.to_seconds();
  CHECK(dash_slow.inverse_roots.to_seconds() < dash_fast_s * 1.05);
}
