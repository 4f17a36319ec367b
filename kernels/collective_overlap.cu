// NcclCommunicator::measure_overlap() of kernels/collective_bench.hpp: a cuBLASLt GEMM on its own
// stream and an in-place all-reduce on the communicator's stream, each alone, then together.
// (Built with NCCL only; collective_bench.cu defines it as throwing otherwise.)
#include "kernels/collective_bench.hpp"

#if PARASIM_HAVE_NCCL
#include <nccl.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/collective_data.cuh"
#include "kernels/collective_impl.cuh"
#include "kernels/cuda_check.cuh"
#include "kernels/cuda_resources.cuh"
#include "kernels/event_timing.cuh"
#include "kernels/lt_gemm.cuh"
#include "kernels/request_checks.hpp"

namespace parasim::kernels {
namespace {

// How long the spin kernel holds the GEMM stream so that the host has enqueued the GEMM and the
// all-reduce before either starts (a launch and an NCCL call take a few microseconds each).
constexpr double kSpinSeconds = 100e-6;

// Busy-waits `cycles` SM clock cycles (clock64 counts SM cycles).
__global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

long long spin_cycles(int device) {
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  if (clock_khz <= 0) clock_khz = 1000000;  // not reported: assume 1 GHz
  return static_cast<long long>(kSpinSeconds * 1e3 * clock_khz);
}

double median_of(std::vector<double> samples) { return summarize(std::move(samples)).median_s; }

}  // namespace

OverlapMeasurement NcclCommunicator::measure_overlap(const GemmRequest& gemm_request,
                                                     std::size_t allreduce_bytes,
                                                     const TimingOptions& options) {
  detail::validate_timing(options);
  detail::validate_gemm(gemm_request);
  const std::size_t count = allreduce_bytes / sizeof(float);
  if (count == 0) {
    throw std::invalid_argument("overlap probe: an all-reduce of " +
                                std::to_string(allreduce_bytes) +
                                " bytes holds no fp32 element");
  }
  const Impl& s = *impl_;
  s.activate();
  const cudaStream_t comm_stream = s.stream_.get();
  const detail::CudaStream gemm_stream_owner;
  const cudaStream_t gemm_stream = gemm_stream_owner.get();
  const detail::LtGemm gemm(gemm_request, gemm_stream);
  const detail::DeviceBuffer buffer(count * sizeof(float));
  detail::fill_pattern(buffer.as<float>(), count, s.rank_, comm_stream);
  std::optional<detail::L2Flusher> flusher;
  if (options.flush_l2) flusher.emplace();
  const long long cycles = spin_cycles(s.device_);

  const auto run_gemm = [&] { gemm.enqueue(gemm_stream); };
  const auto run_allreduce = [&] {
    NCCL_CHECK(ncclAllReduce(buffer.get(), buffer.get(), count, ncclFloat, ncclSum, s.comm_,
                             comm_stream));
  };
  const auto flush_on = [&](cudaStream_t stream) {
    if (flusher) flusher->flush(stream);
  };
  for (int i = 0; i < options.warmup; ++i) {
    run_gemm();
    run_allreduce();
  }
  CUDA_CHECK(cudaStreamSynchronize(gemm_stream));
  CUDA_CHECK(cudaStreamSynchronize(comm_stream));

  OverlapMeasurement result;
  result.gemm_alone_s = median_of(detail::sample_event_times(
      gemm_stream, options.iterations, [&] { flush_on(gemm_stream); }, run_gemm));
  result.allreduce_alone_s = median_of(detail::sample_event_times(
      comm_stream, options.iterations, [&] { flush_on(comm_stream); }, run_allreduce));

  // Together: per sample, [flush] spin on the GEMM stream, then a fork event both streams wait
  // for; the GEMM stream waits for the all-reduce's end before the next sample, so samples do
  // not overlap each other.
  const auto samples = static_cast<std::size_t>(options.iterations);
  std::vector<detail::CudaEvent> fork(samples), gemm_start(samples), gemm_stop(samples),
      allreduce_start(samples), allreduce_stop(samples);
  for (std::size_t i = 0; i < samples; ++i) {
    flush_on(gemm_stream);
    spin_kernel<<<1, 1, 0, gemm_stream>>>(cycles);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaEventRecord(fork[i].get(), gemm_stream));
    CUDA_CHECK(cudaStreamWaitEvent(comm_stream, fork[i].get(), 0));
    CUDA_CHECK(cudaEventRecord(gemm_start[i].get(), gemm_stream));
    run_gemm();
    CUDA_CHECK(cudaEventRecord(gemm_stop[i].get(), gemm_stream));
    CUDA_CHECK(cudaEventRecord(allreduce_start[i].get(), comm_stream));
    run_allreduce();
    CUDA_CHECK(cudaEventRecord(allreduce_stop[i].get(), comm_stream));
    CUDA_CHECK(cudaStreamWaitEvent(gemm_stream, allreduce_stop[i].get(), 0));
  }
  std::vector<double> gemm_together, allreduce_together;
  for (std::size_t i = 0; i < samples; ++i) {
    gemm_together.push_back(detail::elapsed_seconds(gemm_start[i], gemm_stop[i]));
    allreduce_together.push_back(detail::elapsed_seconds(allreduce_start[i], allreduce_stop[i]));
  }
  s.check_async();
  result.gemm_overlapped_s = median_of(std::move(gemm_together));
  result.allreduce_overlapped_s = median_of(std::move(allreduce_together));
  return result;
}

}  // namespace parasim::kernels

#endif
