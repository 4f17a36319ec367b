#pragma once
// parasim::kernels internal: CUDA-event sampling (as Triton's do_bench samples). Each sample is
// `prepare(); record start; body(); record stop` on one stream; nothing waits between samples,
// so the host keeps the stream fed and `prepare` (an L2 flush) stays outside the events. The
// events are read after the last sample.

#include <cuda_runtime.h>

#include <vector>

#include "kernels/cuda_resources.cuh"

namespace parasim::kernels::detail {

// Seconds of each of `samples` samples.
template <typename Prepare, typename Body>
std::vector<double> sample_event_times(cudaStream_t stream, int samples, Prepare&& prepare,
                                       Body&& body) {
  std::vector<CudaEvent> starts(static_cast<std::size_t>(samples));
  std::vector<CudaEvent> stops(static_cast<std::size_t>(samples));
  for (std::size_t s = 0; s < starts.size(); ++s) {
    prepare();
    CUDA_CHECK(cudaEventRecord(starts[s].get(), stream));
    body();
    CUDA_CHECK(cudaEventRecord(stops[s].get(), stream));
  }
  std::vector<double> seconds;
  seconds.reserve(starts.size());
  for (std::size_t s = 0; s < starts.size(); ++s) {
    seconds.push_back(elapsed_seconds(starts[s], stops[s]));
  }
  return seconds;
}

}  // namespace parasim::kernels::detail
