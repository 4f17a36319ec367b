#include "costmodel/measured_scalars.hpp"

#include <algorithm>

namespace parasim::cost {
namespace {

template <typename Ratio>
double median_slowdown(const std::vector<OverlapPoint>& points, Ratio ratio) {
  std::vector<double> r;
  for (const auto& p : points) {
    const double v = ratio(p);
    if (v > 0) r.push_back(v);  // skips points with a zero time (0 / 0)
  }
  if (r.empty()) return 1.0;
  std::sort(r.begin(), r.end());
  const std::size_t mid = r.size() / 2;
  const double median = r.size() % 2 == 1 ? r[mid] : 0.5 * (r[mid - 1] + r[mid]);
  return std::max(1.0, median);
}

}  // namespace

std::optional<NormEfficiency> memory_efficiency_from_norms(const std::vector<NormPoint>& norms,
                                                           Bandwidth hbm) {
  const NormPoint* best = nullptr;
  for (const auto& n : norms) {
    if (n.fused_statistic || !(n.time.median_s > 0) || !(n.moved.value > 0)) continue;
    if (best == nullptr || n.moved.value > best->moved.value) best = &n;
  }
  if (best == nullptr || !(hbm.bytes_per_s > 0)) return std::nullopt;
  NormEfficiency e;
  e.from = best;
  e.achieved_bytes_per_s = best->moved.value / best->time.median_s;
  e.efficiency = e.achieved_bytes_per_s / hbm.bytes_per_s;
  e.clamped = e.efficiency > 1.0;
  e.efficiency = std::min(1.0, e.efficiency);
  return e;
}

double compute_slowdown_when_overlapped(const std::vector<OverlapPoint>& points) {
  return median_slowdown(points, [](const OverlapPoint& p) {
    return p.gemm_alone_s > 0 ? p.gemm_overlapped_s / p.gemm_alone_s : 0.0;
  });
}

double communication_slowdown_when_overlapped(const std::vector<OverlapPoint>& points) {
  return median_slowdown(points, [](const OverlapPoint& p) {
    return p.allreduce_alone_s > 0 ? p.allreduce_overlapped_s / p.allreduce_alone_s : 0.0;
  });
}

}  // namespace parasim::cost
