#include "strategies/optimizers/optimizer_shampoo.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "costmodel/compute_cost.hpp"
#include "costmodel/eager_issue.hpp"
#include "strategies/optimizers/inverse_root_ops.hpp"
#include "strategies/optimizers/optimizer_adamw.hpp"

namespace parasim::strat {
namespace {

struct Block {
  int rows, cols;  // b1 x b2
  int group;       // the layer (or embedding/head) it belongs to
};

// Bytes per element of the optimizer's elementwise passes over fp32 state.
constexpr double kUnaryBytes = 8, kBinaryBytes = 12, kLerpBytes = 12;
// Adam grafting and the update as issued: Distributed Shampoo's foreach calls per step (second
// moment, its root, the division, two norms, the rescale, the weight update: about 9 calls in
// distributed_shampoo.py and adagrad_preconditioner_list.py); DASH's ops per stack
// (gpu_processor_2d.py: the second moment's mul and addcmul, the grafting direction's four ops,
// its norm and copy, the Shampoo direction's norm, scale, rescale and copy).
constexpr int kShampooGraftingForeachCalls = 9;
constexpr std::int64_t kDashGraftingOpsPerStack = 12;

// Blocks of a rows x cols matrix with blocks of at most b x b.
void cut(int rows, int cols, int b, int group, std::vector<Block>& out) {
  for (int r = 0; r < rows; r += b) {
    for (int c = 0; c < cols; c += b)
      out.push_back({std::min(b, rows - r), std::min(b, cols - c), group});
  }
}

// Calls f(rows, cols, group) for each 2-D weight one TP rank of `stage` holds (column-parallel
// out / t, row-parallel in / t); group: the layer, -1 the embedding, -2 the untied head.
template <typename F>
void for_each_matrix(const Scenario& sc, int stage, F&& f) {
  const auto& m = sc.model;
  const int t = sc.parallel.tp;
  const int h = m.hidden, kv = m.kv_heads * m.head_dim(), ffn = m.ffn_hidden;
  // The stage's layers, chunk by chunk (a virtual stage's layers are contiguous).
  for (int c = 0; c < sc.parallel.chunks; ++c) {
    const int vs = sc.virtual_stage(stage, c);
    const int first_layer = sc.first_layer_of_virtual_stage(vs);
    for (int g = first_layer; g < first_layer + sc.virtual_stage_layers(vs); ++g) {
      f(h / t, h, g);                                   // Q
      f(kv / t, h, g);                                  // K
      f(kv / t, h, g);                                  // V
      f(h, h / t, g);                                   // O
      if (m.mlp == MlpKind::kSwiglu) f(ffn / t, h, g);  // gate
      f(ffn / t, h, g);                                 // up
      f(h, ffn / t, g);                                 // down
    }
  }
  const int vocab_rows = (m.vocab + t - 1) / t;
  if (stage == 0) f(vocab_rows, h, -1);
  if (stage == sc.head_stage() && !m.tied_embeddings) f(vocab_rows, h, -2);
}

std::vector<Block> blocks_of_stage(const Scenario& sc, int stage) {
  std::vector<Block> out;
  for_each_matrix(sc, stage, [&](int rows, int cols, int group) {
    cut(rows, cols, sc.optimizer.block_size, group, out);
  });
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
    case RootSolver::kNewtonDb:
      return o.iterations;
    case RootSolver::kChebyshev:
      return o.chebyshev_degree;
    case RootSolver::kEvd:
      return 0;
  }
  return 0;
}

}  // namespace

double shampoo_block_count(const Scenario& sc, int stage) {
  const double b = sc.optimizer.block_size;
  double blocks = 0;
  for_each_matrix(sc, stage, [&](int rows, int cols, int) {
    blocks += std::ceil(rows / b) * std::ceil(cols / b);
  });
  return blocks;
}

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
    const auto r =
        static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[r] += work;
    owned[r].push_back(std::move(list));
  }
  const auto busiest =
      static_cast<std::size_t>(std::max_element(load.begin(), load.end()) - load.begin());
  const auto& mine = owned[busiest];

  const bool stacked = o.kind == OptimizerKind::kDash;
  const double f = o.precondition_frequency;
  // Stacks: per (unit, size) for layer stacking, per size for GPU stacking, per factor otherwise.
  std::map<std::pair<int, int>, int> stacks;                        // (unit or 0, n) -> factors
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
      out.state_bytes += 2.0 * 4.0 *
                         (static_cast<double>(b.rows) * b.rows +
                          static_cast<double>(b.cols) * b.cols);  // factor + root
    }
  }
  const auto fp32 = o.allow_tf32 ? cost::Dtype::kTf32 : cost::Dtype::kFp32;
  const auto solver_dtype =
      o.precision == cost::Dtype::kFp32 && o.allow_tf32 ? cost::Dtype::kTf32 : o.precision;
  const auto implementation =
      stacked ? RootImplementation::kDash : RootImplementation::kDistributedShampoo;
  const sim::Time launch = costs.device().kernel_launch_overhead;
  const sim::Time host_per_op = o.host_op_overhead + launch;
  // One host loop issues the whole step; the parts are read off it (eager_issue.hpp).
  cost::EagerIssue issue(host_per_op);
  auto gemm_body = [&](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
    return costs.gemm_body(cost::GemmShape{m, n, k, batch, fp32});
  };
  auto pass_body = [&](double bytes) { return costs.memory_bound_body(cost::Bytes{bytes}); };
  // One torch._foreach_* call: the bytes split over its launches (cost::foreach_launches).
  auto foreach_call = [&](double bytes, int tensors, double elements) {
    const auto launches = cost::foreach_launches(tensors, elements);
    const sim::Time body = sim::Time::ps(pass_body(bytes).picoseconds() / launches);
    issue.op(body);
    for (std::int64_t i = 1; i < launches; ++i) issue.op(body, launch);
  };

  // Factor update: L = b L + (1 - b) G G^T and R likewise. DASH: one batched GEMM and one lerp
  // per stack and side (dash/processors: bmm then lerp); Distributed Shampoo: one GEMM per factor,
  // then the decay and the add as foreach calls over all factors.
  double factor_elements = 0;
  for (const auto& [key, count] : block_stacks) {
    const std::int64_t b1 = key.second.first, b2 = key.second.second;
    factor_elements += static_cast<double>(count) * static_cast<double>(b1 * b1 + b2 * b2);
    if (stacked) {
      issue.op(gemm_body(b1, b1, b2, count));
      issue.op(pass_body(kLerpBytes * static_cast<double>(count * b1 * b1)));
      issue.op(gemm_body(b2, b2, b1, count));
      issue.op(pass_body(kLerpBytes * static_cast<double>(count * b2 * b2)));
    } else {
      for (int block = 0; block < count; ++block) {
        issue.op(gemm_body(b1, b1, b2, 1));
        issue.op(gemm_body(b2, b2, b1, 1));
      }
    }
  }
  if (!stacked) {
    foreach_call(kUnaryBytes * factor_elements, out.factors_on_rank, factor_elements);
    foreach_call(kBinaryBytes * factor_elements, out.factors_on_rank, factor_elements);
  }
  const sim::Time after_update = issue.elapsed();
  const std::int64_t ops_after_update = issue.op_count();
  const std::int64_t syncs_after_update = issue.sync_count();

  // Inverse roots, every f steps.
  for (const auto& [key, count] : stacks) {
    // A measured stack of this solver (scaling included, timed from C++) replaces the GPU time
    // of the solver's ops, which are still issued.
    const auto measured = costs.measured_solver_time(root_solver_name(o.solver), key.second, count,
                                                     solver_iterations(o), solver_dtype, stacked);
    issue_inverse_roots(o, implementation, RootStack{key.second, count, solver_dtype, fp32}, costs,
                        measured, issue);
  }
  const sim::Time after_roots = issue.elapsed();
  const std::int64_t root_ops = issue.op_count() - ops_after_update;
  const std::int64_t root_syncs = issue.sync_count() - syncs_after_update;

  // Preconditioning L^-1/4 G R^-1/4 (two GEMMs per block or stack) and Adam grafting with the
  // update over the stage's parameters on this rank (one memory-bound pass in bytes):
  // DASH issues it as kDashGraftingOpsPerStack ops per stack, Distributed Shampoo as
  // kShampooGraftingForeachCalls foreach calls over its blocks.
  for (const auto& [key, count] : block_stacks) {
    const std::int64_t b1 = key.second.first, b2 = key.second.second;
    for (int unit = 0; unit < (stacked ? 1 : count); ++unit) {
      issue.op(gemm_body(b1, b2, b1, stacked ? count : 1));
      issue.op(gemm_body(b1, b2, b2, stacked ? count : 1));
    }
  }
  double params = 0, params_on_rank = 0;
  for (const auto& b : blocks) params += static_cast<double>(b.rows) * b.cols;
  for (const auto& unit : mine) {
    for (const auto& b : unit) params_on_rank += static_cast<double>(b.rows) * b.cols;
  }
  const double grafting_bytes =
      adamw_step_bytes(params / ranks, sc.training.precision != cost::Dtype::kFp32);
  if (stacked) {
    const auto ops = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(block_stacks.size()) * kDashGraftingOpsPerStack);
    issue.repeat(sim::Time::ps(pass_body(grafting_bytes).picoseconds() / ops), ops);
  } else {
    for (int call = 0; call < kShampooGraftingForeachCalls; ++call) {
      foreach_call(grafting_bytes / kShampooGraftingForeachCalls, blocks_on_rank, params_on_rank);
    }
  }

  out.factor_update = after_update;
  out.inverse_roots = sim::Time::seconds((after_roots - after_update).to_seconds() / f);
  out.precondition = issue.elapsed() - after_roots;
  out.update_bytes = params * 4.0;
  auto amortised = [f](std::int64_t n) { return std::llround(static_cast<double>(n) / f); };
  out.host_ops = static_cast<int>(issue.op_count() - root_ops + amortised(root_ops));
  out.host_syncs = static_cast<int>(issue.sync_count() - root_syncs + amortised(root_syncs));
  return out;
}

}  // namespace parasim::strat
