#include "costmodel/measured_collectives.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace parasim::cost {
namespace {

// The line t = alpha + beta S through the smallest and largest points, clamped to >= 0.
AlphaBeta edge_line(const std::vector<std::pair<double, double>>& pts) {
  const auto& [s0, t0] = pts.front();
  const auto& [s1, t1] = pts.back();
  if (pts.size() < 2 || !(s1 > s0)) return AlphaBeta{0.0, t0 / s0};
  const double beta = std::max(0.0, (t1 - t0) / (s1 - s0));
  return AlphaBeta{std::max(0.0, t0 - beta * s0), beta};
}

const LinkSpec& link_spec(LinkClass link, const ClusterSpec& cluster) {
  return link == LinkClass::kIntraNode ? cluster.intra_node : cluster.inter_node;
}

}  // namespace

std::string describe_series(CollectiveKind kind, const GroupPlacement& g) {
  return fmt::format("{} on {} GPUs ({} per node x {} node{})", collective_name(kind), g.size,
                     g.gpus_per_node_in_group, g.nodes_spanned, g.nodes_spanned == 1 ? "" : "s");
}

MeasuredCollectives::MeasuredCollectives(std::vector<CollectiveSeries> series) {
  for (CollectiveSeries& s : series) {
    const bool duplicate = std::any_of(series_.begin(), series_.end(), [&](const Prepared& p) {
      return p.series.kind == s.kind && p.series.group == s.group;
    });
    if (duplicate) {
      throw std::invalid_argument("measured collectives: two series for " +
                                  describe_series(s.kind, s.group));
    }
    Prepared p;
    const bool any_out_of_place =
        std::any_of(s.points.begin(), s.points.end(), [](const auto& q) { return !q.in_place; });
    for (const CollectivePoint& q : s.points) {
      if (!(q.message.value > 0.0) || !(q.time.median_s > 0.0)) {
        throw std::invalid_argument("measured collectives: " + describe_series(s.kind, s.group) +
                                    ": bytes and median must be > 0");
      }
      if (q.in_place == !any_out_of_place) p.points.emplace_back(q.message.value, q.time.median_s);
    }
    if (p.points.empty()) {
      throw std::invalid_argument("measured collectives: " + describe_series(s.kind, s.group) +
                                  " has no points");
    }
    std::sort(p.points.begin(), p.points.end());
    p.has_fit = s.fit.has_value();
    p.line = s.fit ? *s.fit : edge_line(p.points);
    p.series = std::move(s);
    series_.push_back(std::move(p));
  }
}

const MeasuredCollectives::Prepared* MeasuredCollectives::prepared(
    CollectiveKind kind, const GroupPlacement& group) const {
  for (const Prepared& p : series_) {
    if (p.series.kind == kind && p.series.group == group) return &p;
  }
  if (kind != CollectiveKind::kSendRecv) return nullptr;
  const Prepared* best = nullptr;
  for (const Prepared& p : series_) {
    const bool same_class = (p.series.group.nodes_spanned == 1) == (group.nodes_spanned == 1);
    if (p.series.kind != kind || !same_class) continue;
    if (best == nullptr || p.series.group.size < best->series.group.size) best = &p;
  }
  return best;
}

const CollectiveSeries* MeasuredCollectives::find(CollectiveKind kind,
                                                  const GroupPlacement& group) const {
  const Prepared* p = prepared(kind, group);
  return p == nullptr ? nullptr : &p->series;
}

std::optional<MeasuredCollectiveTime> MeasuredCollectives::time(CollectiveKind kind,
                                                                const GroupPlacement& group,
                                                                Bytes message) const {
  const Prepared* p = prepared(kind, group);
  if (p == nullptr) return std::nullopt;
  const auto& pts = p->points;
  MeasuredCollectiveTime out;
  out.alpha_s = p->line.alpha_s;
  out.min_bytes = pts.front().first;
  out.max_bytes = pts.back().first;
  const double s = message.value;
  if (s < out.min_bytes || s > out.max_bytes) {
    out.range = s < out.min_bytes ? MeasuredRange::kBelow : MeasuredRange::kAbove;
    out.from_fit = p->has_fit;
    out.seconds = p->line.alpha_s + p->line.beta_s_per_byte * s;
    return out;
  }
  // First point with bytes >= s; exact when equal.
  const auto hi = std::lower_bound(pts.begin(), pts.end(), s,
                                   [](const auto& q, double v) { return q.first < v; });
  if (hi->first == s) {
    out.seconds = hi->second;
    return out;
  }
  const auto lo = hi - 1;
  const double f = std::log(s / lo->first) / std::log(hi->first / lo->first);
  out.seconds = std::exp(std::log(lo->second) + f * std::log(hi->second / lo->second));
  return out;
}

void calibrate_plan(CollectivePlan& plan, double target_s, double alpha_s,
                    const ClusterSpec& cluster) {
  if (plan.phases.empty()) return;
  const double latency_s = std::min(alpha_s, target_s);
  // Latencies: in proportion to the analytical ones (to the steps when those are all zero, equal
  // shares when the steps are too), cumulative rounding so that the picoseconds sum exactly to
  // the target.
  const std::size_t n = plan.phases.size();
  std::vector<double> weights(n);
  double total = 0;
  for (std::size_t i = 0; i < n; ++i) total += weights[i] = plan.phases[i].latency.to_seconds();
  if (!(total > 0)) {
    total = 0;
    for (std::size_t i = 0; i < n; ++i) total += weights[i] = plan.phases[i].steps;
  }
  if (!(total > 0)) {
    std::fill(weights.begin(), weights.end(), 1.0);
    total = static_cast<double>(n);
  }
  const std::int64_t target_ps = sim::Time::seconds(latency_s).picoseconds();
  double cumulative = 0;
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < n; ++i) {
    cumulative += weights[i];
    const std::int64_t upto =
        i + 1 == n ? target_ps
                   : std::llround(static_cast<double>(target_ps) * (cumulative / total));
    plan.phases[i].latency = sim::Time::ps(upto - assigned);
    assigned = upto;
  }
  // Bandwidth terms: one efficiency for every phase that sends bytes; concurrent phases
  // (collective_cost.hpp) count as their slowest.
  double bandwidth_s = 0;
  double step_s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto& ph = plan.phases[i];
    if (ph.bytes_sent_per_rank.value > 0) {
      const Bandwidth bw = link_spec(ph.link, cluster).bandwidth;
      if (!(bw.bytes_per_s > 0)) {
        throw std::invalid_argument(std::string(collective_name(plan.kind)) + ": " +
                                    link_name(ph.link) + " bandwidth must be positive");
      }
      step_s = std::max(step_s, ph.bytes_sent_per_rank.value / bw.bytes_per_s);
    }
    if (!ph.concurrent_with_next || i + 1 == n) {
      bandwidth_s += step_s;
      step_s = 0;
    }
  }
  if (bandwidth_s <= 0) return;
  const double share_s = target_s - sim::Time::ps(target_ps).to_seconds();
  const double efficiency =
      share_s > 0 ? bandwidth_s / share_s : std::numeric_limits<double>::infinity();
  for (auto& ph : plan.phases) {
    if (ph.bytes_sent_per_rank.value > 0) ph.link_efficiency = efficiency;
    ph.rate_cap = Bandwidth{};  // the measurement already holds the mesh's limit
  }
}

}  // namespace parasim::cost
