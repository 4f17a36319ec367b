#pragma once
// parasim::calib CudaBackend — calibration on NVIDIA GPUs through parasim_kernels: cuBLASLt
// GEMMs (bf16, fp16, fp32 and fp32 with TF32), NCCL collectives over all ranks (one rank per GPU,
// the communicator bootstrapped through the ProcessGroup's broadcast), the batched and per-block
// inverse-root solvers, RMSNorm, launch overhead and the GEMM/all-reduce overlap probe.
//
// Rank r uses CUDA device local_rank % (devices on its host). Construction probes the devices and
// throws kernels::GpuUnavailable with one line naming the reason when there is none (no CUDA
// build, no driver, no device): `parasim calibrate` turns that into exit code 3.

#include <memory>

#include "calibrate/backend.hpp"
#include "calibrate/process_group.hpp"

namespace parasim::kernels {
class NcclCommunicator;
}

namespace parasim::calib {

class CudaBackend final : public MeasurementBackend {
 public:
  explicit CudaBackend(const ProcessGroup& group);
  ~CudaBackend() override;

  std::string name() const override { return "cuda"; }
  cost::Provenance provenance() const override;
  cost::GroupPlacement placement() const override;
  std::vector<cost::Dtype> gemm_dtypes() const override;
  bool has_collectives() const override;
  bool has_launch_overhead() const override { return true; }
  bool has_overlap() const override { return group_.size() > 1; }
  bool has_solver(const SolverCase& c) const override;

  cost::MeasuredTime gemm(const GemmCase& c, const kernels::TimingOptions& o) override;
  cost::MeasuredTime solver(const SolverCase& c, const kernels::TimingOptions& o) override;
  cost::NormPoint norm(const NormCase& c, const kernels::TimingOptions& o) override;
  cost::MeasuredTime launch_overhead(const kernels::TimingOptions& o) override;
  cost::CollectivePoint collective(cost::CollectiveKind kind, cost::Bytes message, bool in_place,
                                   const kernels::TimingOptions& o) override;
  cost::OverlapPoint overlap(const OverlapCase& c, const kernels::TimingOptions& o) override;

 private:
  kernels::NcclCommunicator& communicator();

  const ProcessGroup& group_;
  int device_ = 0;
  cost::Provenance provenance_;
  std::unique_ptr<kernels::NcclCommunicator> nccl_;
};

}  // namespace parasim::calib
