// The CUDA-less build of the GPU measurements (gemm_bench.hpp, probe_bench.hpp,
// collective_bench.hpp): each one throws GpuUnavailable naming why there is nothing to measure on.
// PARASIM_NO_CUDA_REASON comes from cmake/ParasimCuda.cmake via kernels/CMakeLists.txt.
#include "kernels/collective_bench.hpp"
#include "kernels/gemm_bench.hpp"
#include "kernels/gpu_error.hpp"
#include "kernels/probe_bench.hpp"

namespace parasim::kernels {
namespace {

[[noreturn]] void unavailable() { throw GpuUnavailable(PARASIM_NO_CUDA_REASON); }

}  // namespace

GemmMeasurement measure_gemm(const GemmRequest& /*request*/, const TimingOptions& /*options*/,
                             int /*device*/) {
  unavailable();
}

NormMeasurement measure_rmsnorm(const NormRequest& /*request*/, const TimingOptions& /*options*/,
                                int /*device*/) {
  unavailable();
}

TimingStats measure_launch_overhead(int /*launches*/, const TimingOptions& /*options*/,
                                    int /*device*/) {
  unavailable();
}

struct NcclCommunicator::Impl {};

NcclCommunicator::NcclCommunicator(int /*rank*/, int /*world*/, int /*device*/,
                                   const Broadcast& /*broadcast_from_root*/) {
  unavailable();
}
NcclCommunicator::~NcclCommunicator() = default;
int NcclCommunicator::rank() const { unavailable(); }
int NcclCommunicator::world() const { unavailable(); }
CollectiveMeasurement NcclCommunicator::measure(NcclCollective /*kind*/,
                                                std::size_t /*message_bytes*/, bool /*in_place*/,
                                                const TimingOptions& /*options*/) {
  unavailable();
}
OverlapMeasurement NcclCommunicator::measure_overlap(const GemmRequest& /*gemm*/,
                                                     std::size_t /*allreduce_bytes*/,
                                                     const TimingOptions& /*options*/) {
  unavailable();
}

}  // namespace parasim::kernels
