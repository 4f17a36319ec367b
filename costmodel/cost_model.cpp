#include "costmodel/cost_model.hpp"

namespace parasim::cost {

CostModel::CostModel(ClusterSpec cluster, GemmEfficiencyParams gemm_params,
                     double memory_efficiency)
    : cluster_(std::move(cluster)),
      gemm_(std::make_shared<RooflineGemmModel>(cluster_.device, gemm_params)),
      memory_efficiency_(memory_efficiency) {}

CostModel::CostModel(ClusterSpec cluster, std::shared_ptr<const GemmCostModel> gemm,
                     double memory_efficiency)
    : cluster_(std::move(cluster)), gemm_(std::move(gemm)), memory_efficiency_(memory_efficiency) {}

sim::Time CostModel::gemm(const GemmShape& shape) const {
  return kernel_time(gemm_->gemm_time(shape), cluster_.device);
}

sim::Time CostModel::memory_bound(Bytes moved) const {
  return kernel_time(memory_bound_time(moved, cluster_.device, memory_efficiency_),
                     cluster_.device);
}

CollectivePlan CostModel::collective(CollectiveKind kind, Bytes message,
                                     const GroupPlacement& group,
                                     CollectiveAlgorithm algorithm) const {
  return plan_collective(kind, algorithm, message, group, cluster_);
}

}  // namespace parasim::cost
