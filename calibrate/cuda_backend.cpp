#include "calibrate/cuda_backend.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/collective_bench.hpp"
#include "kernels/device_probe.hpp"
#include "kernels/gemm_bench.hpp"
#include "kernels/gpu_error.hpp"
#include "kernels/probe_bench.hpp"
#include "kernels/solver_bench.hpp"

namespace parasim::calib {
namespace {

using cost::Dtype;

// CUDA's version encoding 1000 * major + 10 * minor.
std::string cuda_version_text(int v) {
  return v > 0 ? fmt::format("{}.{}", v / 1000, v % 1000 / 10) : "";
}

kernels::GpuDtype gpu_dtype(Dtype d) {
  switch (d) {
    case Dtype::kBf16: return kernels::GpuDtype::kBf16;
    case Dtype::kFp16: return kernels::GpuDtype::kFp16;
    case Dtype::kFp32: case Dtype::kTf32: return kernels::GpuDtype::kFp32;
    case Dtype::kFp8: break;
  }
  throw std::invalid_argument("the cuda backend does not measure fp8 GEMMs");
}

kernels::NcclCollective nccl_kind(cost::CollectiveKind kind) {
  switch (kind) {
    case cost::CollectiveKind::kAllReduce: return kernels::NcclCollective::kAllReduce;
    case cost::CollectiveKind::kAllGather: return kernels::NcclCollective::kAllGather;
    case cost::CollectiveKind::kReduceScatter: return kernels::NcclCollective::kReduceScatter;
    case cost::CollectiveKind::kBroadcast: return kernels::NcclCollective::kBroadcast;
    case cost::CollectiveKind::kAllToAll: return kernels::NcclCollective::kAllToAll;
    case cost::CollectiveKind::kSendRecv: return kernels::NcclCollective::kSendRecv;
  }
  return kernels::NcclCollective::kAllReduce;
}

kernels::GpuSolver gpu_solver(const std::string& name) {
  if (name == "newton-db") return kernels::GpuSolver::kNewtonDB;
  if (name == "coupled-newton") return kernels::GpuSolver::kCoupledNewton;
  if (name == "chebyshev") return kernels::GpuSolver::kChebyshev;
  if (name == "evd") return kernels::GpuSolver::kEigendecomposition;
  throw std::invalid_argument("unknown solver '" + name + "'");
}

}  // namespace

CudaBackend::CudaBackend(const ProcessGroup& group) : group_(group) {
  const kernels::DeviceProbe probe = kernels::probe_devices();
  // Every rank must agree before anything collective starts.
  const bool usable = group_.all(!probe.devices.empty());
  if (probe.devices.empty()) throw kernels::GpuUnavailable(probe.reason);
  if (!usable) throw kernels::GpuUnavailable("another rank found no usable CUDA device");
  device_ = group_.local_rank() % static_cast<int>(probe.devices.size());
  const kernels::DeviceInfo& d = probe.devices[static_cast<std::size_t>(device_)];
  provenance_.backend = "cuda";
  provenance_.device = d.name;
  provenance_.device_count = group_.size();
  provenance_.ranks = group_.size();
  provenance_.nodes = group_.nodes();
  provenance_.driver = probe.driver_version > 0
                           ? "supports CUDA " + cuda_version_text(probe.driver_version)
                           : "";
  provenance_.cuda = cuda_version_text(probe.runtime_version);
  provenance_.cublas = probe.cublas_version > 0 ? std::to_string(probe.cublas_version) : "";
  provenance_.nccl = probe.nccl_version > 0
                         ? fmt::format("{}.{}.{}", probe.nccl_version / 10000,
                                       probe.nccl_version / 100 % 100, probe.nccl_version % 100)
                         : "";
  provenance_.mpi = group_.mpi_version();
  provenance_.clocks = fmt::format("sm {:.0f} MHz, memory {:.0f} MHz (peak, as reported)",
                                   d.sm_clock_khz / 1000.0, d.memory_clock_khz / 1000.0);
}

CudaBackend::~CudaBackend() = default;

cost::Provenance CudaBackend::provenance() const { return provenance_; }

cost::GroupPlacement CudaBackend::placement() const {
  const int per_node = group_.uniform_nodes() ? group_.ranks_per_node() : 1;
  return cost::GroupPlacement{group_.size(), per_node, group_.size() / per_node};
}

std::vector<Dtype> CudaBackend::gemm_dtypes() const {
  return {Dtype::kBf16, Dtype::kFp16, Dtype::kFp32, Dtype::kTf32};
}

bool CudaBackend::has_collectives() const { return group_.has_mpi() && group_.size() > 1; }

bool CudaBackend::has_solver(const SolverCase& c) const {
  return c.dtype == Dtype::kFp32 || c.dtype == Dtype::kFp16 || c.dtype == Dtype::kBf16;
}

cost::MeasuredTime CudaBackend::gemm(const GemmCase& c, const kernels::TimingOptions& o) {
  kernels::GemmRequest r;
  r.m = c.shape.m;
  r.n = c.shape.n;
  r.k = c.shape.k;
  r.batch = c.shape.batch;
  r.dtype = gpu_dtype(c.shape.dtype);
  r.allow_tf32 = c.shape.dtype == Dtype::kTf32;
  r.transpose_a = c.transpose_a;
  r.transpose_b = c.transpose_b;
  r.checks = 16;
  return to_measured(kernels::measure_gemm(r, o, device_).time);
}

cost::MeasuredTime CudaBackend::solver(const SolverCase& c, const kernels::TimingOptions& o) {
  kernels::SolverRequest r;
  r.solver = gpu_solver(c.solver);
  r.block = c.block;
  r.batch = c.batch;
  r.iterations = c.iterations;
  r.dtype = gpu_dtype(c.dtype);
  r.batched = c.batched;
  return to_measured(kernels::measure_solver(r, o, device_).time);
}

cost::NormPoint CudaBackend::norm(const NormCase& c, const kernels::TimingOptions& o) {
  const kernels::NormMeasurement m =
      kernels::measure_rmsnorm(kernels::NormRequest{c.rows, c.hidden, c.fused_statistic}, o,
                               device_);
  cost::NormPoint point;
  point.rows = c.rows;
  point.hidden = c.hidden;
  point.fused_statistic = c.fused_statistic;
  point.moved = cost::Bytes{m.bytes_moved};
  point.time = to_measured(m.time);
  return point;
}

cost::MeasuredTime CudaBackend::launch_overhead(const kernels::TimingOptions& o) {
  constexpr int kLaunchesPerSample = 1000;
  return to_measured(kernels::measure_launch_overhead(kLaunchesPerSample, o, device_));
}

kernels::NcclCommunicator& CudaBackend::communicator() {
  if (!nccl_) {
    nccl_ = std::make_unique<kernels::NcclCommunicator>(
        group_.rank(), group_.size(), device_,
        [this](void* data, std::size_t size) { group_.broadcast(data, size); });
  }
  return *nccl_;
}

cost::CollectivePoint CudaBackend::collective(cost::CollectiveKind kind, cost::Bytes message,
                                              bool in_place, const kernels::TimingOptions& o) {
  const kernels::CollectiveMeasurement m = communicator().measure(
      nccl_kind(kind), static_cast<std::size_t>(message.value), in_place, o);
  const std::vector<double> slowest =
      group_.max({m.time.median_s, m.time.p20_s, m.time.p80_s});
  cost::CollectivePoint point;
  point.message = message;
  point.in_place = in_place;
  point.time = cost::MeasuredTime{slowest[0], slowest[1], slowest[2], m.time.samples};
  point.correct = group_.all(m.correct);
  return point;
}

cost::OverlapPoint CudaBackend::overlap(const OverlapCase& c, const kernels::TimingOptions& o) {
  kernels::GemmRequest g;
  g.m = c.gemm.m;
  g.n = c.gemm.n;
  g.k = c.gemm.k;
  g.dtype = gpu_dtype(c.gemm.dtype);
  g.checks = 0;
  const kernels::OverlapMeasurement m = communicator().measure_overlap(
      g, static_cast<std::size_t>(c.allreduce_message.value), o);
  const std::vector<double> slowest = group_.max(
      {m.gemm_alone_s, m.gemm_overlapped_s, m.allreduce_alone_s, m.allreduce_overlapped_s});
  cost::OverlapPoint point;
  point.gemm = c.gemm;
  point.allreduce_message = c.allreduce_message;
  point.gemm_alone_s = slowest[0];
  point.gemm_overlapped_s = slowest[1];
  point.allreduce_alone_s = slowest[2];
  point.allreduce_overlapped_s = slowest[3];
  return point;
}

}  // namespace parasim::calib
