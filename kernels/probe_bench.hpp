#pragma once
// parasim::kernels probes — small CUDA measurements the cost model needs besides GEMMs and
// collectives: RMSNorm as a bandwidth probe (plain, and with BOOST's online statistic fused),
// kernel launch overhead, and the GEMM / all-reduce overlap slowdown.
//
// RMSNorm: y = x / sqrt(mean(x^2) + eps) * w over rows of `hidden` bf16 elements, one block per
// row, fp32 accumulation; bytes moved = 2 * rows * hidden * 2 (read x, write y) + hidden * 2 (w).
// The fused variant also writes the per-row fp32 sum of squares (BOOST's online RMSNorm keeps it
// for the next all-reduce), 4 bytes per row more.
// Launch overhead: an empty kernel launched `launches` times back to back on one stream; the
// time per launch is (end - start) / launches between two events (the host-side launch rate
// bounds it, which is what the cost model's per-kernel overhead stands for).

#include <cstdint>

#include "kernels/timing_stats.hpp"

namespace parasim::kernels {

struct NormRequest {
  std::int64_t rows = 0;
  std::int64_t hidden = 0;
  bool fused_statistic = false;
};

struct NormMeasurement {
  TimingStats time;
  double bytes_moved = 0;         // reads plus writes, bytes
  double max_relative_error = 0;  // of a few rows against a host computation
};

NormMeasurement measure_rmsnorm(const NormRequest& request, const TimingOptions& options,
                                int device = 0);

// Seconds per launch of an empty kernel (median over options.iterations batches of `launches`).
TimingStats measure_launch_overhead(int launches, const TimingOptions& options, int device = 0);

}  // namespace parasim::kernels
