#pragma once
// parasim::calib MeasurementBackend — what the calibration harness measures with. Two
// implementations: CudaBackend (kernels/: cuBLASLt, NCCL, CUDA solvers; cuda_backend.hpp) and
// CpuBackend (Eigen GEMM, the CPU reference solvers, MPI collectives on the local host;
// cpu_backend.hpp). Both write the same profile format, so everything downstream (fitting,
// `--profile`, `--check`) is the same code.
//
// Ranks: one backend object per process of the ProcessGroup. Collectives involve every rank and
// return, on every rank, the slowest rank's statistics (nccl-tests reports per-rank averages; the
// slowest is what a training step waits for). Every other measurement runs on rank 0 only: the
// harness calls it on rank 0 and the other ranks wait.
//
// Units: seconds (MeasuredTime), bytes (nccl-tests message sizes, collective_cost.hpp).

#include <optional>
#include <string>
#include <vector>

#include "costmodel/measured_tables.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::calib {

struct GemmCase {
  cost::GemmShape shape;
  bool transpose_a = false;
  bool transpose_b = false;
};

struct SolverCase {
  std::string solver;  // "newton-db", "coupled-newton", "chebyshev", "evd"
  int block = 0;
  int batch = 0;
  int iterations = 0;
  cost::Dtype dtype = cost::Dtype::kFp32;
  bool batched = true;
};

struct NormCase {
  std::int64_t rows = 0;
  std::int64_t hidden = 0;
  bool fused_statistic = false;
};

struct OverlapCase {
  cost::GemmShape gemm;
  cost::Bytes allreduce_message;
};

class MeasurementBackend {
 public:
  virtual ~MeasurementBackend();

  virtual std::string name() const = 0;  // "cuda" or "cpu"
  // Device, versions, clocks, ranks and nodes; the harness adds date and command line.
  virtual cost::Provenance provenance() const = 0;
  // Where the ranks sit, for the collective tables.
  virtual cost::GroupPlacement placement() const = 0;
  // Dtypes the GEMM sweep covers, capabilities the plan asks about.
  virtual std::vector<cost::Dtype> gemm_dtypes() const = 0;
  virtual bool has_collectives() const = 0;    // false: one rank, or no MPI / NCCL
  virtual bool has_launch_overhead() const = 0;
  virtual bool has_overlap() const = 0;
  // Solvers and execution modes it can time ("batched" exists only on the GPU).
  virtual bool has_solver(const SolverCase& c) const = 0;

  // Rank 0 only.
  virtual cost::MeasuredTime gemm(const GemmCase& c, const kernels::TimingOptions& o) = 0;
  virtual cost::MeasuredTime solver(const SolverCase& c, const kernels::TimingOptions& o) = 0;
  virtual cost::NormPoint norm(const NormCase& c, const kernels::TimingOptions& o) = 0;
  virtual cost::MeasuredTime launch_overhead(const kernels::TimingOptions& o) = 0;
  // Every rank.
  virtual cost::CollectivePoint collective(cost::CollectiveKind kind, cost::Bytes message,
                                           bool in_place, const kernels::TimingOptions& o) = 0;
  virtual cost::OverlapPoint overlap(const OverlapCase& c, const kernels::TimingOptions& o) = 0;
};

// kernels::TimingStats as the profile stores it.
cost::MeasuredTime to_measured(const kernels::TimingStats& stats);

}  // namespace parasim::calib
