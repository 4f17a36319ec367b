#include "calibrate/trace/trace_fit.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "calibrate/fit.hpp"
#include "calibrate/trace/kernel_classes.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::calib::trace {
namespace {

cost::MeasuredTime measured(std::vector<double> samples_s) {
  const kernels::TimingStats s = kernels::summarize(std::move(samples_s));
  return {s.median_s, s.p20_s, s.p80_s, s.samples};
}

const std::vector<std::int64_t>* dims(const TraceOp& op, std::size_t i) {
  return i < op.input_dims.size() ? &op.input_dims[i] : nullptr;
}

int gpus_per_node_of(const std::vector<RankTrace>& ranks, const TraceFitOptions& options,
                     std::vector<std::string>& notes) {
  if (options.gpus_per_node > 0) return options.gpus_per_node;
  int seen = 0;
  for (const auto& r : ranks) seen = std::max(seen, r.visible_devices);
  if (seen > 1) {
    notes.push_back(
        fmt::format("GPUs per node: {}, the GPUs the profiled process saw "
                    "(--gpus-per-node sets it)",
                    seen));
    return seen;
  }
  notes.push_back(
      "GPUs per node: 8, assumed (the traces name at most one GPU; --gpus-per-node "
      "sets it)");
  return 8;
}

// One collective call on one rank.
struct Call {
  const TraceCollective* collective;
  double duration_us;
};

}  // namespace

std::optional<cost::GemmShape> gemm_shape_of(const TraceOp& op, std::string_view kernel_name) {
  std::size_t a = 0;  // the index of the left operand
  bool batched = false;
  if (op.name == "aten::mm" || op.name == "aten::_scaled_mm") {
    a = 0;
  } else if (op.name == "aten::addmm") {
    a = 1;
  } else if (op.name == "aten::bmm") {
    batched = true;
  } else if (op.name == "aten::baddbmm") {
    a = 1;
    batched = true;
  } else {
    return std::nullopt;
  }
  const auto* left = dims(op, a);
  const auto* right = dims(op, a + 1);
  const std::size_t rank = batched ? 3 : 2;
  if (!left || !right || left->size() != rank || right->size() != rank) return std::nullopt;
  cost::GemmShape shape;
  shape.batch = batched ? (*left)[0] : 1;
  shape.m = (*left)[rank - 2];
  shape.k = (*left)[rank - 1];
  shape.n = (*right)[rank - 1];
  const auto in_range = [](std::int64_t d) { return d >= 1 && d <= cost::kMaxMeasuredDim; };
  if ((*right)[rank - 2] != shape.k || !in_range(shape.m) || !in_range(shape.n) ||
      !in_range(shape.k) || !in_range(shape.batch)) {
    return std::nullopt;  // not a matrix multiply's dims, or beyond what a profile holds
  }
  const std::optional<cost::Dtype> dtype = a < op.input_types.size()
                                               ? profiler_gemm_dtype(op.input_types[a])
                                               : gemm_dtype_from_kernel_name(kernel_name);
  if (op.name == "aten::_scaled_mm") {
    shape.dtype = cost::Dtype::kFp8;
  } else if (dtype) {
    shape.dtype = *dtype;
  } else {
    return std::nullopt;
  }
  return shape;
}

std::optional<TraceNorm> norm_of(const TraceOp& op) {
  const bool layer_norm = op.name == "aten::native_layer_norm";
  if (!layer_norm && op.name != "aten::_fused_rms_norm") return std::nullopt;
  if (op.input_dims.empty() || op.input_dims[0].empty() || op.input_types.empty()) {
    return std::nullopt;
  }
  const int element = profiler_dtype_bytes(op.input_types[0]);
  if (element == 0) return std::nullopt;
  const std::vector<std::int64_t>& input = op.input_dims[0];
  TraceNorm n;
  n.hidden = input.back();
  n.rows = 1;
  for (std::size_t i = 0; i + 1 < input.size(); ++i) {
    // Checked before multiplying: the product stays within what a profile holds, no overflow.
    if (input[i] < 1 || input[i] > cost::kMaxMeasuredDim / n.rows) return std::nullopt;
    n.rows *= input[i];
  }
  if (n.hidden < 1 || n.hidden > cost::kMaxMeasuredDim) return std::nullopt;
  const double rows = static_cast<double>(n.rows), hidden = static_cast<double>(n.hidden);
  // Input and output; the weight, LayerNorm's bias too; LayerNorm's fp32 mean and rstd per row.
  n.moved_bytes = 2 * rows * hidden * element + (layer_norm ? 2 : 1) * hidden * element +
                  (layer_norm ? 8 * rows : 0);
  return n;
}

std::optional<cost::GroupPlacement> placement_of(const TraceCollective& c, int gpus_per_node) {
  const int size = std::max(1, c.group_size > 0 ? c.group_size : static_cast<int>(c.ranks.size()));
  if (static_cast<int>(c.ranks.size()) == size) {
    std::map<int, int> per_node;
    for (const int r : c.ranks) ++per_node[r / gpus_per_node];
    const int nodes = static_cast<int>(per_node.size());
    for (const auto& entry : per_node) {
      if (entry.second * nodes != size) return std::nullopt;
    }
    return cost::GroupPlacement{size, size / nodes, nodes};
  }
  if (size <= gpus_per_node) return cost::GroupPlacement{size, size, 1};
  if (size % gpus_per_node != 0) return std::nullopt;
  return cost::GroupPlacement{size, gpus_per_node, size / gpus_per_node};
}

TraceFit fit_traces(const std::vector<RankTrace>& ranks, const TraceFitOptions& options) {
  if (ranks.empty()) throw std::invalid_argument("no trace to fit");
  TraceFit out;
  TraceCoverage& cov = out.coverage;
  cov.ranks = static_cast<int>(ranks.size());
  cov.steps = ranks.front().steps;
  const int gpus_per_node = gpus_per_node_of(ranks, options, cov.notes);
  std::map<std::string, double> other;
  std::vector<double> launches;
  // GEMM samples per shape; collective calls per (group, n-th call) per rank.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>,
           std::vector<double>>
      gemm_samples;
  std::map<std::pair<std::string, int>, std::vector<Call>> calls;
  // Norm samples per (rows, hidden, bytes moved: LayerNorm and RMSNorm of one shape apart).
  std::map<std::tuple<std::int64_t, std::int64_t, double>, std::vector<double>> norm_samples;
  std::set<int> seen_ranks;
  std::map<std::string, int> ranks_in_group;  // how many of the traces hold calls of a group
  bool unnamed_groups = false;
  for (const RankTrace& r : ranks) {
    cov.steps = std::min(cov.steps, r.steps);
    for (const auto& n : r.notes) cov.notes.push_back(n);
    const bool duplicate = !seen_ranks.insert(r.rank).second;
    if (duplicate) {
      cov.notes.push_back(
          fmt::format("{}: rank {} appears in an earlier trace too; its "
                      "collectives are left out of the matching",
                      r.file, r.rank));
    }
    std::set<std::string> groups_here;
    launches.insert(launches.end(), r.launch_call_us.begin(), r.launch_call_us.end());
    std::map<std::int64_t, double> gemm_time_by_op;
    std::map<std::int64_t, std::pair<int, double>> norm_kernels_by_op;  // kernels, time
    std::map<std::int64_t, std::string_view> first_kernel_of_op;
    std::map<std::string, int> calls_in_group;
    for (const TraceKernel& k : r.kernels) {
      const auto c = static_cast<std::size_t>(k.kind);
      cov.gpu_time_us += k.duration_us;
      cov.class_time_us[c] += k.duration_us;
      ++cov.class_kernels[c];
      if (k.kind == KernelClass::kOther) other[k.name] += k.duration_us;
      if (k.kind == KernelClass::kMemoryBound && k.launch_op >= 0 &&
          norm_of(r.ops[static_cast<std::size_t>(k.launch_op)])) {
        auto& entry = norm_kernels_by_op[k.launch_op];
        ++entry.first;
        entry.second += k.duration_us;
      }
      if (k.kind == KernelClass::kGemm) {
        const bool shaped =
            k.launch_op >= 0 &&
            gemm_shape_of(r.ops[static_cast<std::size_t>(k.launch_op)],
                          first_kernel_of_op.try_emplace(k.launch_op, k.name).first->second);
        if (shaped) {
          gemm_time_by_op[k.launch_op] += k.duration_us;
        } else {
          ++cov.gemm_kernels_without_shape;
        }
      }
      if (k.kind == KernelClass::kCollective) {
        if (!k.collective || k.collective->element_bytes == 0 ||
            k.collective->message_bytes() <= 0) {
          ++cov.collective_kernels_without_metadata;
          continue;
        }
        if (duplicate) continue;
        std::string group = k.collective->group;
        if (group.empty()) {  // older PyTorch: by its ranks, else by its size alone
          unnamed_groups = true;
          group = k.collective->ranks.empty()
                      ? fmt::format("size {}", k.collective->group_size)
                      : fmt::format("ranks {}", fmt::join(k.collective->ranks, ","));
        }
        groups_here.insert(group);
        calls[{group, calls_in_group[group]++}].push_back({&*k.collective, k.duration_us});
      }
    }
    for (const std::string& g : groups_here) ++ranks_in_group[g];
    for (const auto& [op, entry] : norm_kernels_by_op) {
      if (entry.first != 1) continue;  // a decomposed norm: several passes, not one
      const TraceNorm n = *norm_of(r.ops[static_cast<std::size_t>(op)]);
      norm_samples[{n.rows, n.hidden, n.moved_bytes}].push_back(entry.second * 1e-6);
      cov.fitted_time_us += entry.second;
      ++cov.norm_calls;
    }
    for (const auto& [op, time_us] : gemm_time_by_op) {
      const cost::GemmShape s =
          *gemm_shape_of(r.ops[static_cast<std::size_t>(op)], first_kernel_of_op.at(op));
      gemm_samples[{s.m, s.n, s.k, s.batch, static_cast<int>(s.dtype)}].push_back(time_us * 1e-6);
      cov.fitted_time_us += time_us;
      ++cov.gemm_calls;
    }
  }
  for (const auto& [key, samples] : gemm_samples) {
    cost::GemmPoint p;
    p.shape.m = std::get<0>(key);
    p.shape.n = std::get<1>(key);
    p.shape.k = std::get<2>(key);
    p.shape.batch = std::get<3>(key);
    p.shape.dtype = static_cast<cost::Dtype>(std::get<4>(key));
    p.time = measured(samples);
    out.tables.gemm.push_back(p);
  }

  for (const auto& [key, samples] : norm_samples) {
    cost::NormPoint p;
    p.rows = std::get<0>(key);
    p.hidden = std::get<1>(key);
    p.fused_statistic = false;
    p.moved = cost::Bytes{std::get<2>(key)};
    p.time = measured(samples);
    out.tables.norms.push_back(p);
  }

  // Collectives: one time per matched call, then points per (kind, placement, size).
  std::map<std::tuple<int, int, int, int>, std::map<double, std::vector<double>>> series;
  std::map<std::tuple<int, int, int, int>, std::map<double, int>> series_kernels;
  int mismatched = 0, partial = 0;
  for (const auto& [key, members] : calls) {
    const TraceCollective& first = *members.front().collective;
    // Missing on a rank that has the group: the traces cover different calls (point-to-point
    // groups aside, whose ranks send and receive different numbers of calls).
    if (first.kind != cost::CollectiveKind::kSendRecv &&
        static_cast<int>(members.size()) < ranks_in_group[key.first]) {
      ++partial;
      continue;
    }
    bool same = true;
    double shortest = members.front().duration_us;
    double total = 0;
    for (const Call& m : members) {
      same = same && m.collective->kind == first.kind &&
             m.collective->message_bytes() == first.message_bytes();
      shortest = std::min(shortest, m.duration_us);
      total += m.duration_us;
    }
    if (!same) {
      ++mismatched;
      continue;
    }
    const std::optional<cost::GroupPlacement> placed = placement_of(first, gpus_per_node);
    if (!placed) {
      ++cov.collective_calls_uneven;
      continue;
    }
    const cost::GroupPlacement g = *placed;
    if (g.size < 2) continue;
    const std::tuple<int, int, int, int> series_key{static_cast<int>(first.kind), g.size,
                                                    g.gpus_per_node_in_group, g.nodes_spanned};
    series[series_key][first.message_bytes()].push_back(shortest * 1e-6);
    series_kernels[series_key][first.message_bytes()] += static_cast<int>(members.size());
    cov.fitted_time_us += total;
    ++cov.collective_calls;
  }
  if (mismatched > 0) {
    cov.notes.push_back(fmt::format(
        "{} collective calls differ in kind or size between the ranks' traces at the same place "
        "in their group's sequence: left out (are the traces from the same steps?)",
        mismatched));
  }
  if (partial > 0) {
    cov.notes.push_back(fmt::format(
        "{} collective calls are in some ranks' traces of their group and not in others: left "
        "out (profile the same steps on every rank)",
        partial));
  }
  if (unnamed_groups) {
    cov.notes.push_back(
        "collectives without a process group name (PyTorch before 2.2): "
        "matched by their group's ranks, or, without those, by its size alone");
  }
  if (ranks.size() == 1 && cov.collective_calls > 0) {
    cov.notes.push_back(
        "one rank's trace: a collective's duration there includes its wait for "
        "the group's later ranks, so the collective times are upper bounds (give "
        "every rank's trace of the group to remove the wait)");
  }
  for (const auto& [key, by_size] : series) {
    cost::CollectiveSeries s;
    s.kind = static_cast<cost::CollectiveKind>(std::get<0>(key));
    s.group = {std::get<1>(key), std::get<2>(key), std::get<3>(key)};
    for (const auto& [bytes, samples] : by_size) {
      cost::CollectivePoint p;
      p.message = cost::Bytes{bytes};
      p.time = measured(samples);
      s.points.push_back(p);
    }
    if (s.points.size() >= 2) s.fit = fit_series(s);
    std::vector<int> kernels;
    for (const auto& entry : series_kernels.at(key)) kernels.push_back(entry.second);
    out.collective_kernels.push_back(std::move(kernels));
    out.tables.collectives.push_back(std::move(s));
  }

  std::vector<std::pair<std::string, double>> others(other.begin(), other.end());
  std::sort(others.begin(), others.end(), [](const auto& a, const auto& b) {
    return std::tie(b.second, a.first) < std::tie(a.second, b.first);
  });
  if (others.size() > 20) others.resize(20);
  cov.other_kernels_us = std::move(others);
  if (!launches.empty()) cov.launch_median_us = kernels::summarize(launches).median_s;
  if (cov.gpu_time_us <= 0) throw std::invalid_argument("the traces hold no GPU kernel");
  out.tables.complete = true;
  return out;
}

}  // namespace parasim::calib::trace
