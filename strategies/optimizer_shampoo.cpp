#include "strategies/optimizer_shampoo.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "costmodel/compute_cost.hpp"
#include "strategies/optimizer_adamw.hpp"

namespace parasim::strat {
namespace {

struct Block {
  int rows, cols;  // b1 x b2
  int group;       // the layer (or embedding/head) it belongs to
};

// Blocks of a rows x cols matrix with blocks of at most b x b.
void cut(int rows, int cols, int b, int group, std::vector<Block>& out) {
  for (int r = 0; r < rows; r += b) {
    for (int c = 0; c < cols; c += b) out.push_back({std::min(b, rows - r), std::min(b, cols - c), group});
  }
}

// The 2-D weights one TP rank of `stage` holds (column-parallel out / t, row-parallel in / t).
std::vector<Block> blocks_of_stage(const Scenario& sc, int stage) {
  const auto& m = sc.model;
  const int t = sc.parallel.tp, b = sc.optimizer.block_size;
  const int h = m.hidden, kv = m.kv_heads * m.head_dim(), f = m.ffn_hidden;
  std::vector<Block> out;
  const int first_layer = stage * sc.layers_per_stage();
  for (int l = 0; l < sc.layers_per_stage(); ++l) {
    const int g = first_layer + l;
    cut(h / t, h, b, g, out);   // Q
    cut(kv / t, h, b, g, out);  // K
    cut(kv / t, h, b, g, out);  // V
    cut(h, h / t, b, g, out);   // O
    if (m.mlp == MlpKind::kSwiglu) cut(f / t, h, b, g, out);  // gate
    cut(f / t, h, b, g, out);   // up
    cut(h, f / t, b, g, out);   // down
  }
  const int vocab_rows = (m.vocab + t - 1) / t;
  if (stage == 0) cut(vocab_rows, h, b, -1, out);
  if (stage == sc.parallel.pp - 1 && !m.tied_embeddings) cut(vocab_rows, h, b, -2, out);
  return out;
}

double factor_work(const Block& b) {
  return std::pow(static_cast<double>(b.rows), 3) + std::pow(static_cast<double>(b.cols), 3);
}

// Matmuls one inverse 4th root of one factor takes.
int root_matmuls(const OptimizerSpec& o) {
  switch (o.solver) {
    case RootSolver::kCoupledNewton: return 4 * o.iterations;
    case RootSolver::kNewtonDb: return 2 * (1 + 3 * (o.iterations - 1));
    case RootSolver::kChebyshev: return o.chebyshev_degree - 1;
    case RootSolver::kEvd: return 0;
  }
  return 0;
}

// The iterations a measured solver point is compared by (solver_bench.hpp): per run for the
// Newton solvers, the degree for Chebyshev, none for EVD.
int solver_iterations(const OptimizerSpec& o) {
  switch (o.solver) {
    case RootSolver::kCoupledNewton:
    case RootSolver::kNewtonDb: return o.iterations;
    case RootSolver::kChebyshev: return o.chebyshev_degree;
    case RootSolver::kEvd: return 0;
  }
  return 0;
}

// Runs `count` kernels each on `batch` n x n x k GEMMs: batched when stacked (one launch per
// kernel), one launch per GEMM otherwise.
sim::Time gemms(const cost::CostModel& costs, double n, double k, double m_rows, int batch,
                int count, bool stacked, cost::Dtype dtype, int& kernels) {
  const cost::GemmShape one{std::llround(m_rows), std::llround(n), std::llround(k), 1, dtype};
  if (stacked) {
    const cost::GemmShape many{one.m, one.n, one.k, batch, dtype};
    kernels += count;
    return costs.gemm(many) * count;
  }
  kernels += count * batch;
  return costs.gemm(one) * (static_cast<std::int64_t>(count) * batch);
}

}  // namespace

ShampooStepCost shampoo_step_cost(const Scenario& sc, const cost::CostModel& costs, int stage) {
  const OptimizerSpec& o = sc.optimizer;
  const auto blocks = blocks_of_stage(sc, stage);
  ShampooStepCost out;
  out.blocks = static_cast<int>(blocks.size());
  const int ranks = sc.replicas();
  // Greedy load balance: units (blocks, or layers for DASH) largest first onto the least loaded.
  std::map<int, std::vector<Block>> units;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const int key = o.kind == OptimizerKind::kDash ? blocks[i].group : static_cast<int>(i);
    units[key].push_back(blocks[i]);
  }
  std::vector<std::pair<double, std::vector<Block>>> ordered;
  for (auto& [key, list] : units) {
    double work = 0;
    for (const auto& b : list) work += factor_work(b);
    ordered.emplace_back(work, std::move(list));
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<double> load(static_cast<std::size_t>(ranks), 0.0);
  std::vector<std::vector<std::vector<Block>>> owned(static_cast<std::size_t>(ranks));
  for (auto& [work, list] : ordered) {
    const auto r = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[r] += work;
    owned[r].push_back(std::move(list));
  }
  const auto busiest = static_cast<std::size_t>(std::max_element(load.begin(), load.end()) - load.begin());
  const auto& mine = owned[busiest];

  const bool stacked = o.kind == OptimizerKind::kDash;
  const double f = o.precondition_frequency;
  int kernels = 0;
  // Stacks: per (unit, size) for layer stacking, per size for GPU stacking, per factor otherwise.
  std::map<std::pair<int, int>, int> stacks;  // (unit or 0, n) -> factors
  std::map<std::pair<int, std::pair<int, int>>, int> block_stacks;  // (unit, (b1, b2)) -> blocks
  for (std::size_t u = 0; u < mine.size(); ++u) {
    const int unit = o.stacking == Stacking::kGpu ? 0 : static_cast<int>(u);
    for (const auto& b : mine[u]) {
      ++stacks[{unit, b.rows}];
      ++stacks[{unit, b.cols}];
      ++block_stacks[{unit, {b.rows, b.cols}}];
      out.factors_on_rank += 2;
      out.state_bytes += 2.0 * 4.0 * (static_cast<double>(b.rows) * b.rows +
                                      static_cast<double>(b.cols) * b.cols);  // factor + root
    }
  }
  const auto fp32 = o.allow_tf32 ? cost::Dtype::kTf32 : cost::Dtype::kFp32;
  const auto solver_dtype =
      o.precision == cost::Dtype::kFp32 && o.allow_tf32 ? cost::Dtype::kTf32 : o.precision;
  for (const auto& [key, count] : block_stacks) {
    const double b1 = key.second.first, b2 = key.second.second;
    // L += G G^T and R += G^T G; then L^-1/4 G and (.) R^-1/4.
    out.factor_update += gemms(costs, b1, b2, b1, count, 1, stacked, fp32, kernels);
    out.factor_update += gemms(costs, b2, b1, b2, count, 1, stacked, fp32, kernels);
    out.precondition += gemms(costs, b2, b1, b1, count, 1, stacked, fp32, kernels);
    out.precondition += gemms(costs, b2, b2, b1, count, 1, stacked, fp32, kernels);
  }
  int root_kernels = 0;
  sim::Time roots;
  for (const auto& [key, count] : stacks) {
    const double n = key.second;
    sim::Time stack;  // the analytical time of this stack's roots
    if (o.solver == RootSolver::kEvd) {
      // Tridiagonal reduction: n column steps, memory-bound, one launch each; then GEMM-like work.
      const double read = n * n * n / 3.0 * 4.0;
      const sim::Time reduction = costs.memory_bound(cost::Bytes{read / n}) * std::llround(n);
      const cost::GemmShape work{std::llround(n), std::llround(n), std::llround(3 * n), 1, fp32};
      stack = (reduction + costs.gemm(work)) * count;  // EVD is not batched in either
      root_kernels += static_cast<int>(n + 1) * count;
    } else {
      if (o.scaling == RootScaling::kPowerIteration) {
        stack += gemms(costs, 16, n, n, count, 10, stacked, cost::Dtype::kBf16, root_kernels);
      } else {
        stack += costs.memory_bound(cost::Bytes{n * n * 4.0 * (stacked ? count : 1)}) *
                 (stacked ? 1 : count);
        root_kernels += stacked ? 1 : count;
      }
      stack += gemms(costs, n, n, n, count, root_matmuls(o), stacked, solver_dtype, root_kernels);
    }
    // A measured stack of this solver (scaling included) replaces the analytical time; launches
    // are still counted as above.
    const auto measured =
        costs.measured_solver_time(root_solver_name(o.solver), key.second, count,
                                   solver_iterations(o), solver_dtype, stacked);
    roots += measured ? *measured : stack;
  }
  out.inverse_roots = sim::Time::seconds(roots.to_seconds() / f);
  kernels += static_cast<int>(std::lround(root_kernels / f));
  // Grafting (Adam) and applying the update over the stage's parameters on this rank.
  double params = 0;
  for (const auto& b : blocks) params += static_cast<double>(b.rows) * b.cols;
  out.precondition += costs.memory_bound(
      cost::Bytes{adamw_step_bytes(params / ranks, sc.training.precision != cost::Dtype::kFp32)});
  ++kernels;
  out.update_bytes = params * 4.0;
  out.kernels = kernels;
  return out;
}

}  // namespace parasim::strat
