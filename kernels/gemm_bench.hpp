#pragma once
// parasim::kernels GEMM benchmark — one cuBLASLt matmul timed like Triton's do_bench (events,
// warm-up, L2 flushed before each sample, median and p20/p80).
//
// C[m x n] = op(A)[m x k] op(B)[k x n], `batch` times (strided batched when batch > 1), column
// major as cuBLAS sees it, alpha 1 beta 0. bf16 and fp16 accumulate in fp32 (CUBLAS_COMPUTE_32F);
// fp32 uses CUBLAS_COMPUTE_32F (no TF32) unless allow_tf32, then CUBLAS_COMPUTE_32F_FAST_TF32.
// Timing: CUDA events around each sample on one stream, after `warmup` untimed runs; with
// flush_l2 a buffer of twice the L2 size is overwritten (cudaMemsetAsync, outside the events)
// before every sample; the workspace is 32 MiB; the heuristic's first algorithm is used.
// Correctness: inputs are filled with seeded uniform values in [-1, 1) (`seed`); after timing, `checks`
// output elements are recomputed on the host in double from the same inputs and the largest
// relative error (|c - ref| / max(|ref|, 1e-3 * sqrt(k))) is reported.

#include <cstdint>

#include "kernels/timing_stats.hpp"

namespace parasim::kernels {

enum class GpuDtype { kBf16, kFp16, kFp32 };
const char* gpu_dtype_name(GpuDtype dtype);  // "bf16", "fp16", "fp32"

struct GemmRequest {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  GpuDtype dtype = GpuDtype::kBf16;
  bool transpose_a = false;
  bool transpose_b = false;
  bool allow_tf32 = false;  // fp32 only
  int checks = 64;          // output elements verified on the host (0: none)
  std::uint64_t seed = 1;   // of the seeded inputs (same seed, same inputs)
};

struct GemmMeasurement {
  TimingStats time;
  double flops = 0;               // 2 m n k batch
  double max_relative_error = 0;  // over the checked elements
  int checked = 0;
};

// Times one GEMM on CUDA device `device`. Throws GpuUnavailable (no CUDA build, no device) or
// GpuError (a CUDA/cuBLASLt call failed, not enough memory, no algorithm for the shape), and
// std::invalid_argument for a dimension < 1.
GemmMeasurement measure_gemm(const GemmRequest& request, const TimingOptions& options,
                             int device = 0);

}  // namespace parasim::kernels
