#include "calibrate/trace/trace_pricing.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "calibrate/trace/kernel_classes.hpp"
#include "costmodel/attention_cost.hpp"
#include "costmodel/units.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::calib::trace {
namespace {

constexpr std::size_t kLargestShapes = 12;

std::string placement_text(const cost::GroupPlacement& g) {
  return g.nodes_spanned == 1 ? fmt::format("{} GPUs (1 node)", g.size)
                              : fmt::format("{} GPUs ({} nodes x {})", g.size, g.nodes_spanned,
                                            g.gpus_per_node_in_group);
}

}  // namespace

std::optional<std::pair<cost::AttentionShape, cost::FlashPass>> attention_of(const TraceOp& op) {
  const std::string& n = op.name;
  const bool flash_layout =
      n == "aten::_flash_attention_forward" || n == "aten::_flash_attention_backward";
  const bool sdpa_layout = n.rfind("aten::_scaled_dot_product_flash_attention", 0) == 0 ||
                           n.rfind("aten::_scaled_dot_product_cudnn_attention", 0) == 0 ||
                           n.rfind("aten::_scaled_dot_product_efficient_attention", 0) == 0 ||
                           n.rfind("aten::_efficient_attention_", 0) == 0;
  if (!flash_layout && !sdpa_layout) return std::nullopt;
  const bool backward = n.find("backward") != std::string::npos;
  // The backward ops take grad_out first, shaped as the query.
  if (op.input_dims.empty() || op.input_dims[0].size() != 4) return std::nullopt;
  const auto& q = op.input_dims[0];
  cost::AttentionShape shape;
  const bool seq_second = flash_layout || n.rfind("aten::_efficient_attention_", 0) == 0;
  const double batch = static_cast<double>(q[0]);
  const double heads = static_cast<double>(seq_second ? q[2] : q[1]);
  shape.seq_q = static_cast<double>(seq_second ? q[1] : q[2]);
  shape.seq_kv = shape.seq_q;
  shape.head_dim = static_cast<double>(q[3]);
  shape.heads = batch * heads;
  shape.causal = true;
  if (!op.input_types.empty()) {
    shape.dtype = profiler_gemm_dtype(op.input_types[0]).value_or(cost::Dtype::kBf16);
  }
  if (shape.heads < 1 || shape.seq_q < 1 || shape.head_dim < 1) return std::nullopt;
  return std::pair(shape, backward ? cost::FlashPass::kBackward : cost::FlashPass::kForward);
}

TracePricing price_traces(const std::vector<RankTrace>& ranks, const TraceFit& fit,
                          const cost::CostModel& costs) {
  TracePricing out;
  const TraceCoverage& cov = fit.coverage;
  const double per_rank_step = 1.0 / (static_cast<double>(ranks.size()) * std::max(1, cov.steps));
  std::vector<ClassPricing> classes(kKernelClasses);
  for (int c = 0; c < kKernelClasses; ++c) {
    classes[static_cast<std::size_t>(c)].kind = static_cast<KernelClass>(c);
    classes[static_cast<std::size_t>(c)].kernels = static_cast<int>(
        std::lround(cov.class_kernels[static_cast<std::size_t>(c)] * per_rank_step));
    classes[static_cast<std::size_t>(c)].measured_us =
        cov.class_time_us[static_cast<std::size_t>(c)] * per_rank_step;
  }
  // `calls` over all the traces' ranks (a matched collective once per traced member), scaled to
  // one rank's step by `per_call`.
  auto add = [&](KernelClass kind, const std::string& what, int calls, double per_call,
                 double measured_s, double predicted_s) {
    ClassPricing& c = classes[static_cast<std::size_t>(kind)];
    c.priced_measured_us += measured_s * 1e6 * calls * per_call;
    c.predicted_us += predicted_s * 1e6 * calls * per_call;
    out.largest.push_back({what, static_cast<int>(std::lround(calls * per_call)), measured_s * 1e6,
                           predicted_s * 1e6});
  };
  for (const cost::GemmPoint& p : fit.tables.gemm) {
    const double predicted = costs.gemm_body(p.shape).to_seconds();
    add(KernelClass::kGemm,
        fmt::format("gemm {}x{}x{}{} {}", p.shape.m, p.shape.n, p.shape.k,
                    p.shape.batch > 1 ? fmt::format(" x{}", p.shape.batch) : "",
                    cost::dtype_name(p.shape.dtype)),
        p.time.samples, per_rank_step, p.time.median_s, predicted);
  }
  for (std::size_t si = 0; si < fit.tables.collectives.size(); ++si) {
    const cost::CollectiveSeries& s = fit.tables.collectives[si];
    for (std::size_t pi = 0; pi < s.points.size(); ++pi) {
      const cost::CollectivePoint& p = s.points[pi];
      const cost::CollectivePlan plan = costs.collective(s.kind, p.message, s.group);
      const double predicted = cost::estimate_time(plan, costs.cluster()).to_seconds();
      add(KernelClass::kCollective,
          fmt::format("{} {} over {}", cost::collective_name(s.kind), cost::format_bytes(p.message),
                      placement_text(s.group)),
          fit.collective_kernels[si][pi], per_rank_step, p.time.median_s, predicted);
    }
  }
  for (const cost::NormPoint& p : fit.tables.norms) {
    add(KernelClass::kMemoryBound, fmt::format("norm {} x {}", p.rows, p.hidden), p.time.samples,
        per_rank_step, p.time.median_s, costs.memory_bound_body(p.moved).to_seconds());
  }
  // Attention: per op call, its kernels summed.
  std::map<std::string, std::pair<std::vector<double>, double>> attention;  // what -> times, pred
  for (const RankTrace& r : ranks) {
    std::map<std::int64_t, double> by_op;
    for (const TraceKernel& k : r.kernels) {
      if (k.kind == KernelClass::kAttention && k.launch_op >= 0)
        by_op[k.launch_op] += k.duration_us;
    }
    for (const auto& [op, time_us] : by_op) {
      const auto problem = attention_of(r.ops[static_cast<std::size_t>(op)]);
      if (!problem) continue;
      const auto& [shape, pass] = *problem;
      const std::string what = fmt::format(
          "attention {} {} x seq {} x d {} {}", pass == cost::FlashPass::kForward ? "fwd" : "bwd",
          shape.heads, shape.seq_q, shape.head_dim, cost::dtype_name(shape.dtype));
      auto& entry = attention[what];
      entry.first.push_back(time_us * 1e-6);
      entry.second = cost::flash_attention_time(shape, pass, costs.device()).to_seconds();
    }
  }
  if (!attention.empty()) {
    out.notes.push_back("attention priced as causal (the trace does not record is_causal)");
  }
  for (auto& [what, entry] : attention) {
    std::vector<double>& times = entry.first;
    const int calls = static_cast<int>(times.size());
    add(KernelClass::kAttention, what, calls, per_rank_step,
        kernels::summarize(std::move(times)).median_s, entry.second);
  }
  for (const ClassPricing& c : classes) {
    if (c.kernels > 0 || c.measured_us > 0) out.classes.push_back(c);
  }
  // Largest by total time per step, then by time per call, then by name.
  std::sort(out.largest.begin(), out.largest.end(), [](const PricedShape& a, const PricedShape& b) {
    return std::tuple(b.measured_us * b.calls, b.measured_us, a.what) <
           std::tuple(a.measured_us * a.calls, a.measured_us, b.what);
  });
  if (out.largest.size() > kLargestShapes) out.largest.resize(kLargestShapes);
  return out;
}

}  // namespace parasim::calib::trace
