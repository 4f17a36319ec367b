// Shampoo and DASH step model (seed-papers.md 4.2-4.3): block partition, stacking, solver matmul
// counts from kernel launches.
#include <doctest/doctest.h>

#include "costmodel/cost_model.hpp"
#include "scenario_builder.hpp"
#include "strategies/model_presets.hpp"
#include "strategies/optimizer_shampoo.hpp"

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
  // blocks and 2 remainders (seed-papers.md 4.2). Per layer: Q, K, V, O 2048 x 2048 -> 4 blocks
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
  CHECK(gpu.kernels < layer.kernels);
  CHECK(layer.kernels < shampoo.kernels);
  CHECK(gpu.inverse_roots < shampoo.inverse_roots);
  // Block by block: coupled Newton's 4 matmuls per iteration per factor, plus one scaling pass.
  const auto cn11 = launches(K::kShampoo, S::kNone, R::kCoupledNewton, 11);
  CHECK(cn11.kernels - shampoo.kernels == 4 * shampoo.factors_on_rank);
  // Newton-DB: 2 (1 + 3 (k - 1)) matmuls; one more iteration adds 6 per factor.
  const auto db10 = launches(K::kShampoo, S::kNone, R::kNewtonDb, 10);
  const auto db11 = launches(K::kShampoo, S::kNone, R::kNewtonDb, 11);
  CHECK(db11.kernels - db10.kernels == 6 * db10.factors_on_rank);
  // Every factor's state (factor and root, fp32) is counted on its owner.
  CHECK(shampoo.state_bytes > 0);
}
