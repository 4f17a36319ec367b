#include "costmodel/cost_model.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "costmodel/measured_solvers.hpp"

namespace parasim::cost {
namespace {

void warn_if_uncalibrated(const DeviceSpec& device, CostWarnings& warnings) {
  if (device.kernels.calibrated) return;
  warnings.add(fmt::format(
      "device \"{}\" has no measured kernel efficiencies: using conservative defaults ({}); run "
      "parasim calibrate, or set cluster.device.kernel_efficiency",
      device.name, describe_conservative(device.kernels)));
}

}  // namespace

CostModel::CostModel(ClusterSpec cluster, GemmEfficiencyParams gemm_params,
                     std::optional<double> memory_efficiency)
    : cluster_(std::move(cluster)),
      gemm_(std::make_shared<RooflineGemmModel>(cluster_.device, gemm_params)),
      memory_efficiency_(memory_efficiency.value_or(cluster_.device.kernels.memory_streaming)),
      warnings_(std::make_shared<CostWarnings>()) {
  warn_if_uncalibrated(cluster_.device, *warnings_);
}

CostModel::CostModel(ClusterSpec cluster, std::shared_ptr<const GemmCostModel> gemm,
                     double memory_efficiency)
    : CostModel(std::move(cluster), std::move(gemm), memory_efficiency, {}, nullptr) {}

CostModel::CostModel(ClusterSpec cluster, std::shared_ptr<const GemmCostModel> gemm,
                     double memory_efficiency, MeasuredInputs measured,
                     std::shared_ptr<CostWarnings> warnings)
    : cluster_(std::move(cluster)),
      gemm_(std::move(gemm)),
      memory_efficiency_(memory_efficiency),
      measured_(std::move(measured)),
      warnings_(warnings ? std::move(warnings) : std::make_shared<CostWarnings>()) {
  if (!(measured_.compute_slowdown >= 1.0) || !(measured_.communication_slowdown >= 1.0)) {
    throw std::invalid_argument("cost model: overlap slowdowns must be >= 1");
  }
  warn_if_uncalibrated(cluster_.device, *warnings_);
}

sim::Time CostModel::gemm(const GemmShape& shape) const {
  return kernel_time(gemm_body(shape), cluster_.device);
}

sim::Time CostModel::memory_bound(Bytes moved) const {
  return kernel_time(memory_bound_body(moved), cluster_.device);
}

sim::Time CostModel::gemm_body(const GemmShape& shape) const { return gemm_->gemm_time(shape); }

sim::Time CostModel::memory_bound_body(Bytes moved) const {
  return memory_bound_time(moved, cluster_.device, memory_efficiency_);
}

sim::Time CostModel::evd_body(int n, Dtype dtype) const {
  const double nn = n;
  const double read = nn * nn * nn / 3.0 * 4.0;
  const sim::Time column = memory_bound(Bytes{read / nn});  // a launch per column
  const GemmShape work{n, n, 3 * static_cast<std::int64_t>(n), 1, dtype};
  return column * n + gemm_body(work);
}

void CostModel::warn_unpublished_fabric() const {
  if (cluster_.fabric.published) return;
  warnings_->add(fmt::format(
      "cluster \"{}\": no published NCCL figures for its links; collectives assume {:.3f} of "
      "the NVLink and {:.3f} of the NIC bandwidth (costmodel/collective_fabric.cpp); a profile "
      "with measured collectives replaces them",
      cluster_.name, cluster_.fabric.intra_node_efficiency, cluster_.fabric.inter_node_efficiency));
}

CollectivePlan CostModel::token_exchange(const TokenExchange& exchange,
                                         const GroupPlacement& group) const {
  CollectivePlan plan = plan_token_exchange(exchange, group, cluster_);
  if (!plan.phases.empty()) warn_unpublished_fabric();
  return plan;
}

CollectivePlan CostModel::collective(CollectiveKind kind, Bytes message,
                                     const GroupPlacement& group,
                                     std::optional<CollectiveAlgorithm> algorithm) const {
  CollectivePlan plan = algorithm ? plan_collective(kind, *algorithm, message, group, cluster_)
                                  : plan_collective(kind, message, group, cluster_);
  if (!measured_.collectives && !plan.phases.empty()) warn_unpublished_fabric();
  if (!measured_.collectives || plan.phases.empty()) return plan;
  const auto t = measured_.collectives->time(kind, group, message);
  if (!t) {
    warnings_->add(fmt::format("no measured {} in the profile; its plan is analytical",
                               describe_series(kind, group)));
    return plan;
  }
  if (t->range != MeasuredRange::kInside) {
    warnings_->add(fmt::format(
        "measured {}: messages {} the measured range ({} to {}) are extrapolated with {}",
        describe_series(kind, group), t->range == MeasuredRange::kBelow ? "below" : "above",
        format_bytes(Bytes{t->min_bytes}), format_bytes(Bytes{t->max_bytes}),
        t->from_fit ? "the alpha-beta fit" : "the line through the smallest and largest points"));
  }
  calibrate_plan(plan, t->seconds, t->alpha_s, cluster_);
  return plan;
}

std::optional<sim::Time> CostModel::measured_solver_time(std::string_view solver, int block,
                                                         int batch, int iterations, Dtype dtype,
                                                         bool batched) const {
  if (!measured_.solvers) return std::nullopt;
  const SolverQuery query{solver, block, batch, iterations, dtype, batched};
  const auto e = estimate_solver_time(*measured_.solvers, query);
  if (!e) return std::nullopt;
  if (e->extrapolated) {
    const bool iterative = is_iterative_solver(solver);
    warnings_->add(fmt::format(
        "measured solver table: {} ({}, {}) for block {}, batch {}{} is outside the measured "
        "range; scaled from block {}, batch {}{}",
        solver, dtype_name(dtype), batched ? "batched" : "block by block", block, batch,
        iterative ? fmt::format(", iterations {}", iterations) : "", e->from->block, e->from->batch,
        iterative ? fmt::format(", iterations {}", e->from->iterations) : ""));
  }
  return sim::Time::seconds(e->seconds);
}

}  // namespace parasim::cost
