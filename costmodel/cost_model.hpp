#pragma once
// parasim::cost::CostModel — the one object strategies ask "how long does this take?".
//
// It bundles the cluster description, a GEMM model (the analytical roofline by default; calibrated
// tables plug in through GemmCostModel), memory-bound kernel cost and collective planning. It is a
// plain value (copyable, no globals): many can exist side by side on different threads.
//
// Every kernel time returned here includes the device's launch overhead once.

#include <memory>

#include "costmodel/collective_cost.hpp"
#include "costmodel/compute_cost.hpp"
#include "costmodel/hardware.hpp"

namespace parasim::cost {

class CostModel {
 public:
  explicit CostModel(ClusterSpec cluster, GemmEfficiencyParams gemm_params = {},
                     double memory_efficiency = kDefaultMemoryEfficiency);
  CostModel(ClusterSpec cluster, std::shared_ptr<const GemmCostModel> gemm,
            double memory_efficiency);

  const ClusterSpec& cluster() const { return cluster_; }
  const DeviceSpec& device() const { return cluster_.device; }
  const GemmCostModel& gemm_model() const { return *gemm_; }
  double memory_efficiency() const { return memory_efficiency_; }

  // One GEMM kernel: model time plus launch overhead.
  sim::Time gemm(const GemmShape& shape) const;
  // One memory-bound kernel moving `moved` bytes (reads plus writes), plus launch overhead.
  sim::Time memory_bound(Bytes moved) const;
  // A collective over a group placed as `group` (phases for the simulator to run).
  CollectivePlan collective(CollectiveKind kind, Bytes message, const GroupPlacement& group,
                            CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing) const;

 private:
  ClusterSpec cluster_;
  std::shared_ptr<const GemmCostModel> gemm_;
  double memory_efficiency_;
};

}  // namespace parasim::cost
