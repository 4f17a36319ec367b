// measure_gemm(): one cuBLASLt matmul timed as kernels/gemm_bench.hpp says.
#include "kernels/gemm_bench.hpp"

#include <optional>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_resources.cuh"
#include "kernels/event_timing.cuh"
#include "kernels/lt_gemm.cuh"
#include "kernels/request_checks.hpp"

namespace parasim::kernels {

GemmMeasurement measure_gemm(const GemmRequest& request, const TimingOptions& options,
                             int device) {
  detail::validate_gemm(request);
  detail::validate_timing(options);
  REQUIRE_DEVICE(device);

  const detail::CudaStream stream;
  const detail::LtGemm gemm(request, stream.get());
  std::optional<detail::L2Flusher> flusher;
  if (options.flush_l2) flusher.emplace();

  // Warm-up: the first launches pay for lazy module loading and heuristics caches.
  for (int i = 0; i < options.warmup; ++i) gemm.enqueue(stream.get());
  const std::vector<double> samples = detail::sample_event_times(
      stream.get(), options.iterations,
      [&] {
        if (flusher) flusher->flush(stream.get());
      },
      [&] { gemm.enqueue(stream.get()); });

  GemmMeasurement result;
  result.time = summarize(samples);
  result.flops = gemm.flops();
  const detail::GemmCheck check = gemm.check(request.checks);
  result.max_relative_error = check.max_relative_error;
  result.checked = check.checked;
  return result;
}

}  // namespace parasim::kernels
