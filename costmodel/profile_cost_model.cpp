// make_cost_model (profile.hpp): a profile's overrides and measured tables into a CostModel.
#include <fmt/format.h>

#include "costmodel/measured_gemm_model.hpp"
#include "costmodel/measured_scalars.hpp"
#include "costmodel/profile.hpp"
#include "costmodel/profile_fit.hpp"

namespace parasim::cost {

CostModel make_cost_model(const ClusterSpec& cluster, const Profile* profile) {
  if (profile == nullptr) return CostModel(cluster);
  ClusterSpec c = profile->apply(cluster);
  const MeasuredTables& t = profile->measured;
  double memory_efficiency = profile->memory_efficiency.value_or(c.device.kernels.memory_streaming);
  if (t.empty()) return CostModel(std::move(c), profile->gemm, memory_efficiency);

  auto warnings = std::make_shared<CostWarnings>();
  const std::string& measured_on = t.provenance.device;
  if (!measured_on.empty() && device_model(measured_on) != device_model(c.device.name)) {
    warnings->add(
        fmt::format("the profile was measured on \"{}\" but the cluster's device is "
                    "\"{}\"",
                    measured_on, c.device.name));
  }
  if (t.launch_overhead && !profile->kernel_launch_overhead) {
    c.device.kernel_launch_overhead = sim::Time::seconds(t.launch_overhead->median_s);
  }
  if (!profile->memory_efficiency) {
    if (const auto e = memory_efficiency_from_norms(t.norms, c.device.hbm_bandwidth)) {
      memory_efficiency = e->efficiency;
      if (e->clamped) {
        warnings->add(
            fmt::format("measured RMSNorm reached {} against the device's HBM bandwidth {}; memory "
                        "efficiency clamped to 1",
                        format_bandwidth(Bandwidth{e->achieved_bytes_per_s}),
                        format_bandwidth(c.device.hbm_bandwidth)));
      }
    }
  }
  std::shared_ptr<const GemmCostModel> gemm;
  if (t.gemm.empty()) {
    gemm = std::make_shared<RooflineGemmModel>(c.device, profile->gemm);
  } else {
    gemm = std::make_shared<MeasuredGemmModel>(c.device, profile->gemm, t.gemm, warnings);
  }
  MeasuredInputs measured;
  if (!t.collectives.empty()) {
    measured.collectives = std::make_shared<MeasuredCollectives>(t.collectives);
  }
  if (!t.solvers.empty()) {
    measured.solvers = std::make_shared<std::vector<SolverPoint>>(t.solvers);
  }
  if (!t.overlap.empty()) {  // else the published default (cost_model.hpp)
    measured.compute_slowdown = compute_slowdown_when_overlapped(t.overlap);
    measured.communication_slowdown = communication_slowdown_when_overlapped(t.overlap);
  }
  return CostModel(std::move(c), std::move(gemm), memory_efficiency, std::move(measured),
                   std::move(warnings));
}

}  // namespace parasim::cost
