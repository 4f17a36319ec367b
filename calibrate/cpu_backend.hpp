#pragma once
// parasim::calib CpuBackend — calibration on the host CPU, so that the whole pipeline
// (measure, fit, write the profile, `simulate --profile`, `calibrate --check`) runs on any
// machine, CI included: `mpirun -np 2 parasim calibrate --backend cpu --quick --out p.json`.
//
// What it measures:
//   * GEMM: Eigen single-precision products (fp32 only; the CPU has no bf16 GEMM here), one
//     thread per rank, after writing a buffer larger than the last-level cache (the L2 flush of
//     Triton's do_bench, on a CPU).
//   * Collectives: MPI on MPI_COMM_WORLD (cpu_collectives.hpp, run in libparasim_mpi.so), fp32
//     sums, nccl-tests sizes.
//   * Solvers: the CPU reference solvers (inverse_root.hpp, chebyshev.hpp) block by block, in
//     double, with a fixed number of iterations; there is no batched execution on the CPU.
//   * RMSNorm: fp32 rows (plain and with the statistic kept), as a memory-bandwidth probe.
// It does not measure kernel launch overhead or GEMM/communication overlap (there are no
// kernels or streams); those fields stay absent from the profile.
// Timing: std::chrono::steady_clock around each sample.

#include "calibrate/backend.hpp"
#include "calibrate/process_group.hpp"

namespace parasim::calib {

class CpuBackend final : public MeasurementBackend {
 public:
  explicit CpuBackend(const ProcessGroup& group);

  std::string name() const override { return "cpu"; }
  cost::Provenance provenance() const override;
  cost::GroupPlacement placement() const override;
  std::vector<cost::Dtype> gemm_dtypes() const override { return {cost::Dtype::kFp32}; }
  bool has_collectives() const override;
  bool has_launch_overhead() const override { return false; }
  bool has_overlap() const override { return false; }
  bool has_solver(const SolverCase& c) const override;

  cost::MeasuredTime gemm(const GemmCase& c, const kernels::TimingOptions& o) override;
  cost::MeasuredTime solver(const SolverCase& c, const kernels::TimingOptions& o) override;
  cost::NormPoint norm(const NormCase& c, const kernels::TimingOptions& o) override;
  cost::MeasuredTime launch_overhead(const kernels::TimingOptions& o) override;
  cost::CollectivePoint collective(cost::CollectiveKind kind, cost::Bytes message, bool in_place,
                                   const kernels::TimingOptions& o) override;
  cost::OverlapPoint overlap(const OverlapCase& c, const kernels::TimingOptions& o) override;

 private:
  const ProcessGroup& group_;
};

// The CPU model name from /proc/cpuinfo ("model name"), or "unknown CPU".
std::string cpu_model_name();

}  // namespace parasim::calib
