#include "strategies/optimizer_shampoo.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "costmodel/compute_cost.hpp"
#include "costmodel/eager_issue.hpp"
#include "strategies/inverse_root_ops.hpp"
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
  // Stacks: per (unit, size) for layer stacking, per size for GPU stacking, per factor otherwise.
  std::map<std::pair<int, int>, int> stacks;  // (unit or 0, n) -> factors
  std::map<std::pair<int, std::pair<int, int>>, int> block_stacks;  // (unit, (b1, b2)) -> blocks
  int blocks_on_rank = 0;
  for (std::size_t u = 0; u < mine.size(); ++u) {
    const int unit = o.stacking == Stacking::kGpu ? 0 : static_cast<int>(u);
    for (const auto& b : mine[u]) {
      ++stacks[{unit, b.rows}];
      ++stacks[{unit, b.cols}];
      ++block_stacks[{unit, {b.rows, b.cols}}];
      ++blocks_on_rank;
      out.factors_on_rank += 2;
      out.state_bytes += 2.0 * 4.0 * (static_cast<double>(b.rows) * b.rows +
                                      static_cast<double>(b.cols) * b.cols);  // factor + root
    }
  }
  const auto fp32 = o.allow_tf32 ? cost::Dtype::kTf32 : cost::Dtype::kFp32;
  const auto solver_dtype =
      o.precision == cost::Dtype::kFp32 && o.allow_tf32 ? cost::Dtype::kTf32 : o.precision;
  const sim::Time launch = costs.device().kernel_launch_overhead;
  const sim::Time host_per_op = o.host_op_overhead + launch;
  // Each part is issued by the eager host loop from an idle GPU (eager_issue.hpp).
  cost::EagerIssue update(host_per_op), precondition(host_per_op);
  auto gemm_body = [&](double m, double n, double k, int batch) {
    const cost::GemmShape s{std::llround(m), std::llround(n), std::llround(k), batch, fp32};
    return costs.gemm(s) - launch;
  };
  for (const auto& [key, count] : block_stacks) {
    const double b1 = key.second.first, b2 = key.second.second;
    // L = beta L + (1 - beta) G G^T and R likewise (one GEMM each); then L^-1/4 G and (.) R^-1/4.
    const int batch = stacked ? count : 1;
    for (int unit = 0; unit < (stacked ? 1 : count); ++unit) {
      update.op(gemm_body(b1, b1, b2, batch));
      update.op(gemm_body(b2, b2, b1, batch));
      precondition.op(gemm_body(b1, b2, b1, batch));
      precondition.op(gemm_body(b1, b2, b2, batch));
    }
  }
  // Adam grafting and the update over the stage's parameters on this rank: one memory-bound
  // pass, issued as 6 ops per block (second moment, its root, the division, two norms and the
  // rescale) by Distributed Shampoo and per stack by DASH; the bytes are the same.
  double params = 0;
  for (const auto& b : blocks) params += static_cast<double>(b.rows) * b.cols;
  const sim::Time grafting =
      costs.memory_bound(cost::Bytes{adamw_step_bytes(
          params / ranks, sc.training.precision != cost::Dtype::kFp32)}) - launch;
  const int grafting_ops =
      std::max(1, 6 * (stacked ? static_cast<int>(block_stacks.size()) : blocks_on_rank));
  precondition.ops(sim::Time::ps(grafting.picoseconds() / grafting_ops), grafting_ops);
  out.factor_update = update.elapsed();
  out.precondition = precondition.elapsed();

  cost::EagerIssue roots_issue(host_per_op);
  sim::Time measured_roots;
  std::int64_t measured_ops = 0;
  for (const auto& [key, count] : stacks) {
    // A measured stack of this solver (scaling included, timed from C++, so without the
    // framework's host cost) replaces the issued sequence; its ops are still counted.
    const auto measured =
        costs.measured_solver_time(root_solver_name(o.solver), key.second, count,
                                   solver_iterations(o), solver_dtype, stacked);
    if (measured) {
      cost::EagerIssue counted(sim::Time::zero());
      issue_inverse_roots(o, costs, key.second, count, stacked, solver_dtype, fp32, counted);
      measured_roots += *measured;
      measured_ops += counted.ops();
    } else if (stacked) {
      issue_inverse_roots(o, costs, key.second, count, true, solver_dtype, fp32, roots_issue);
    } else {
      // Distributed Shampoo wraps every factor's root (shampoo_preconditioner_list.py,
      // amortized_computation): the bias-corrected copy, a finite check of the factor read back
      // on the host, the root, a finite check of the result read back, and the copy into place.
      const double elements = static_cast<double>(key.second) * key.second;
      const sim::Time copy = costs.memory_bound(cost::Bytes{8 * elements}) - launch;
      const sim::Time check = costs.memory_bound(cost::Bytes{5 * elements}) - launch;
      for (int factor = 0; factor < count; ++factor) {
        roots_issue.op(copy);
        roots_issue.op(check);
        roots_issue.op(sim::Time::zero());  // .all()
        roots_issue.sync();
        issue_inverse_roots(o, costs, key.second, 1, false, solver_dtype, fp32, roots_issue);
        roots_issue.op(check);
        roots_issue.op(sim::Time::zero());
        roots_issue.sync();
        roots_issue.op(copy);
      }
    }
  }
  out.inverse_roots =
      sim::Time::seconds((roots_issue.elapsed() + measured_roots).to_seconds() / f);
  out.update_bytes = params * 4.0;
  out.kernels = static_cast<int>(update.ops() + precondition.ops() +
                                 std::llround(static_cast<double>(roots_issue.ops() + measured_ops) / f));
  out.host_syncs = static_cast<int>(std::llround(static_cast<double>(roots_issue.syncs()) / f));
  return out;
}

}  // namespace parasim::strat
