#pragma once
// parasim::kernels timing statistics — how every calibration measurement is summarised.
//
// Convention (Triton's do_bench, triton-lang/triton python/triton/testing.py): a measurement repeats a kernel after warm-up and
// reports the median with the 20th and 80th percentiles of the per-sample times, so one outlier
// (a clock change, a preempted host thread) does not move the result.
//
// Host-only C++17 (compiled with or without CUDA); every CUDA and CPU measurement uses it.

#include <vector>

namespace parasim::kernels {

struct TimingStats {
  double median_s = 0;  // seconds
  double p20_s = 0;     // 20th percentile, seconds
  double p80_s = 0;     // 80th percentile, seconds
  int samples = 0;
};

// Warm-up and sample counts of one measurement (nccl-tests' -w and -n).
struct TimingOptions {
  int warmup = 5;
  int iterations = 20;
  bool flush_l2 = true;  // GEMM and solvers: overwrite a buffer larger than L2 before each sample
};

// Median, p20 and p80 of `samples_s` by linear interpolation between order statistics (the
// "type 7" quantile of R and NumPy). Throws std::invalid_argument when empty or when a sample is
// negative or not finite.
TimingStats summarize(std::vector<double> samples_s);

}  // namespace parasim::kernels
