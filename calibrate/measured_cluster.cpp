#include "calibrate/measured_cluster.hpp"

#include <algorithm>

namespace parasim::calib {
namespace {

constexpr double kFallbackFlops = 1e12;        // FLOP/s
constexpr double kFallbackBandwidth = 1e12;    // bytes/s
constexpr double kLinkBandwidth = 100e9;       // bytes/s
constexpr sim::Time kLinkLatency = sim::Time::us(1);

double best_rate(const cost::MeasuredTables& t, cost::Dtype d) {
  double best = 0;
  for (const auto& g : t.gemm) {
    if (g.shape.dtype == d && g.time.median_s > 0) {
      best = std::max(best, g.shape.flops().value / g.time.median_s);
    }
  }
  return best;
}

}  // namespace

cost::ClusterSpec measured_cluster(const cost::MeasuredTables& t) {
  cost::ClusterSpec c;
  c.name = "measured";
  c.device.name = t.provenance.device.empty() ? "measured device" : t.provenance.device;
  const double fp32 = best_rate(t, cost::Dtype::kFp32);
  auto peak = [&](cost::Dtype d) {
    const double ceiling = c.device.kernels.gemm_ceiling(d);
    const double rate = best_rate(t, d);
    return cost::FlopRate{(rate > 0 ? rate : fp32 > 0 ? fp32 : kFallbackFlops * ceiling) /
                          ceiling};
  };
  c.device.peak_fp32 = peak(cost::Dtype::kFp32);
  c.device.peak_tf32 = peak(cost::Dtype::kTf32);
  c.device.peak_bf16 = peak(cost::Dtype::kBf16);
  c.device.peak_fp16 = peak(cost::Dtype::kFp16);
  c.device.peak_fp8 = cost::FlopRate{0};
  double hbm = 0;
  for (const auto& n : t.norms) {
    if (n.time.median_s > 0) hbm = std::max(hbm, n.moved.value / n.time.median_s);
  }
  c.device.hbm_bandwidth = cost::Bandwidth{hbm > 0 ? hbm : kFallbackBandwidth};
  c.device.hbm_capacity = cost::Bytes{80e9};
  c.device.sm_count = 0;
  c.intra_node = cost::LinkSpec{cost::Bandwidth{kLinkBandwidth}, kLinkLatency};
  c.inter_node = cost::LinkSpec{cost::Bandwidth{kLinkBandwidth}, kLinkLatency};
  c.gpus_per_node = 1;
  c.nodes = 1;
  if (!t.collectives.empty()) {
    const auto& g = t.collectives.front().group;
    c.gpus_per_node = g.gpus_per_node_in_group;
    c.nodes = g.nodes_spanned;
  }
  return c;
}

}  // namespace parasim::calib
