#pragma once
// parasim::cost measured scalars — the single numbers a profile's measured tables imply
// (measured_tables.hpp): the achievable share of HBM bandwidth and the compute/communication
// overlap slowdowns. make_cost_model (profile.hpp) applies them.

#include <optional>
#include <vector>

#include "costmodel/measured_tables.hpp"
#include "costmodel/units.hpp"

namespace parasim::cost {

struct NormEfficiency {
  double efficiency = 1.0;  // in (0, 1]
  double achieved_bytes_per_s = 0;
  bool clamped = false;  // the achieved rate exceeded the device's HBM bandwidth
  const NormPoint* from = nullptr;
};

// Memory efficiency of elementwise kernels from RMSNorm points: achieved bytes/s (moved / median)
// of the largest plain (fused_statistic == false) point, by bytes moved (the first on a tie; the
// largest is the one least affected by launch overhead and tail effects), over `hbm`, clamped to
// (0, 1]. std::nullopt without a plain point or with a non-positive hbm bandwidth.
std::optional<NormEfficiency> memory_efficiency_from_norms(const std::vector<NormPoint>& norms,
                                                           Bandwidth hbm);

// Slowdowns when a GEMM and an all-reduce run at once: the median over the points of
// gemm_overlapped_s / gemm_alone_s (compute) or allreduce_overlapped_s / allreduce_alone_s
// (communication), the mean of the two middle ratios for an even count, at least 1 (overlap
// never speeds a kernel up in the engine's model). 1 without points.
double compute_slowdown_when_overlapped(const std::vector<OverlapPoint>& points);
double communication_slowdown_when_overlapped(const std::vector<OverlapPoint>& points);

}  // namespace parasim::cost
