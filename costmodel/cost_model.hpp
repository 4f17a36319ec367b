#pragma once
// parasim::cost::CostModel — the one object strategies ask "how long does this take?".
//
// It bundles the cluster description, a GEMM model (the analytical roofline by default;
// MeasuredGemmModel when a profile has measured GEMMs), memory-bound kernel cost, collective
// planning (calibrated to measured series when a profile has them, measured_collectives.hpp),
// measured solver times and overlap slowdowns. It is a plain value (copyable, no globals): many
// can exist side by side on different threads. Copies share the measured tables (immutable) and
// one warning sink (thread-safe).
//
// Every kernel time returned here includes the device's launch overhead once.
// make_cost_model (profile.hpp) builds one from a cluster and a profile.

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "costmodel/collective_cost.hpp"
#include "costmodel/compute_cost.hpp"
#include "costmodel/cost_warnings.hpp"
#include "costmodel/hardware.hpp"
#include "costmodel/measured_collectives.hpp"
#include "costmodel/token_exchange.hpp"
#include "costmodel/measured_tables.hpp"

namespace parasim::cost {

// Compute stretched while a collective runs on its GPU, when no profile measures it: "an average
// computational slowdown of 18.9%, with a maximum of 40.0%" over GPT and LLaMA training kernels
// overlapped with NCCL collectives on A100, H100, MI250 and MI210 (Lee et al., "Characterizing
// Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning", arXiv 2507.03114,
// abstract). Communication is not slowed by default: no published figure.
inline constexpr double kDefaultComputeSlowdownWhenOverlapped = 1.189;

// What measured tables add to the analytical model; default: nothing measured.
struct MeasuredInputs {
  std::shared_ptr<const MeasuredCollectives> collectives;   // null: analytical plans
  std::shared_ptr<const std::vector<SolverPoint>> solvers;  // null: no solver times
  double compute_slowdown = kDefaultComputeSlowdownWhenOverlapped;  // >= 1
  double communication_slowdown = 1.0;                              // >= 1
};

class CostModel {
 public:
  // memory_efficiency unset: the device's streaming fraction (KernelEfficiency). Every
  // constructor warns once when the device's kernel efficiencies are uncalibrated.
  explicit CostModel(ClusterSpec cluster, GemmEfficiencyParams gemm_params = {},
                     std::optional<double> memory_efficiency = std::nullopt);
  CostModel(ClusterSpec cluster, std::shared_ptr<const GemmCostModel> gemm,
            double memory_efficiency);
  // `warnings` null: a fresh sink. Throws std::invalid_argument for a slowdown below 1.
  CostModel(ClusterSpec cluster, std::shared_ptr<const GemmCostModel> gemm,
            double memory_efficiency, MeasuredInputs measured,
            std::shared_ptr<CostWarnings> warnings);

  const ClusterSpec& cluster() const { return cluster_; }
  const DeviceSpec& device() const { return cluster_.device; }
  const GemmCostModel& gemm_model() const { return *gemm_; }
  double memory_efficiency() const { return memory_efficiency_; }

  // One GEMM kernel: model time plus launch overhead.
  sim::Time gemm(const GemmShape& shape) const;
  // One memory-bound kernel moving `moved` bytes (reads plus writes), plus launch overhead.
  sim::Time memory_bound(Bytes moved) const;
  // The same kernels' bodies, without the launch overhead (for callers that price launches
  // themselves: fused or grouped kernels, an eager host loop).
  sim::Time gemm_body(const GemmShape& shape) const;
  sim::Time memory_bound_body(Bytes moved) const;
  // GPU time of one symmetric eigendecomposition of an n x n matrix (cuSOLVER syevd, no launch of
  // ours): the tridiagonal reduction as n memory-bound column steps reading n^3/3 fp32 elements in
  // all, each with a launch of cuSOLVER's own (issued from C++, so GPU-side time here), plus
  // 6 n^3 FLOPs of GEMM-like work at `dtype`. An assumption standing for cuSOLVER's latency-bound
  // sytrd, not a measurement (a profile's measured EVD stacks replace it, measured_solver_time).
  sim::Time evd_body(int n, Dtype dtype) const;
  // A collective over a group placed as `group` (phases for the simulator to run): NCCL's
  // algorithm and protocol choice (nccl_model.hpp), or `algorithm` forced. With measured
  // collectives: that plan calibrated to the measured time of the series of this kind and
  // placement (measured_collectives.hpp; warnings when extrapolated or when there is no series).
  // The algorithm only shapes the phases then: the measurement is whatever NCCL chose. Without
  // them, on a cluster whose fabric is not published (collective_fabric.hpp), a warning says so.
  CollectivePlan collective(CollectiveKind kind, Bytes message, const GroupPlacement& group,
                            std::optional<CollectiveAlgorithm> algorithm = std::nullopt) const;
  // DeepEP's dispatch or combine over `group` (token_exchange.hpp): analytical (a profile's
  // measured all-to-alls are NCCL's, not DeepEP's), with the same warning for an unpublished
  // fabric.
  CollectivePlan token_exchange(const TokenExchange& exchange, const GroupPlacement& group) const;

  // Slowdown factors (>= 1) of a compute kernel while communication runs on its device, and of
  // communication while a compute kernel runs: the median ratio overlapped / alone of the
  // profile's overlap points (measured_scalars.hpp); without them the published default above
  // for compute and 1 for communication.
  double compute_slowdown_when_overlapped() const { return measured_.compute_slowdown; }
  double communication_slowdown_when_overlapped() const { return measured_.communication_slowdown; }

  // A stack of `batch` inverse roots of `block` x `block` matrices by `solver` ("newton-db",
  // "coupled-newton", "chebyshev", "evd") with `iterations` (per run; the degree for chebyshev;
  // ignored for evd), scaled from the nearest measured point of the same solver, dtype and
  // batched flag (measured_solvers.hpp; a warning when extrapolating). The whole stack, launch
  // overheads included as measured. std::nullopt when no such point exists.
  std::optional<sim::Time> measured_solver_time(std::string_view solver, int block, int batch,
                                                int iterations, Dtype dtype, bool batched) const;

  // What the measured paths had to guess (extrapolations, fall-backs), for the CLI to print.
  const CostWarnings& warnings() const { return *warnings_; }

 private:
  void warn_unpublished_fabric() const;

  ClusterSpec cluster_;
  std::shared_ptr<const GemmCostModel> gemm_;
  double memory_efficiency_;
  MeasuredInputs measured_;
  std::shared_ptr<CostWarnings> warnings_;
};

}  // namespace parasim::cost
