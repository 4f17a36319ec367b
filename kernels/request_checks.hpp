#pragma once
// parasim::kernels internal: argument checks of the GPU measurements (plain C++; the CUDA build
// runs them before touching the device, so a bad request is std::invalid_argument everywhere
// a device exists and where it does not).

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/gemm_bench.hpp"
#include "kernels/probe_bench.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::kernels::detail {

inline void validate_timing(const TimingOptions& options) {
  if (options.iterations < 1) {
    throw std::invalid_argument("timing: iterations must be at least 1 (got " +
                                std::to_string(options.iterations) + ")");
  }
  if (options.warmup < 0) {
    throw std::invalid_argument("timing: warmup must not be negative (got " +
                                std::to_string(options.warmup) + ")");
  }
}

inline void validate_gemm(const GemmRequest& request) {
  if (request.m < 1 || request.n < 1 || request.k < 1 || request.batch < 1) {
    throw std::invalid_argument("GEMM: m, n, k and batch must be at least 1 (got m " +
                                std::to_string(request.m) + ", n " + std::to_string(request.n) +
                                ", k " + std::to_string(request.k) + ", batch " +
                                std::to_string(request.batch) + ")");
  }
  // cuBLASLt's CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT is an int32_t.
  if (request.batch > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("GEMM: batch " + std::to_string(request.batch) +
                                " does not fit cuBLASLt's int32 batch count");
  }
  if (request.checks < 0) {
    throw std::invalid_argument("GEMM: checks must not be negative");
  }
}

inline void validate_norm(const NormRequest& request) {
  if (request.rows < 1 || request.hidden < 1) {
    throw std::invalid_argument("RMSNorm: rows and hidden must be at least 1 (got rows " +
                                std::to_string(request.rows) + ", hidden " +
                                std::to_string(request.hidden) + ")");
  }
  // One block per row: the grid's x dimension holds at most 2^31 - 1 blocks.
  if (request.rows > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("RMSNorm: rows must fit a CUDA grid (at most 2^31 - 1)");
  }
}

}  // namespace parasim::kernels::detail
