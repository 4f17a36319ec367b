// LtGemm: the cuBLASLt matmul of kernels/lt_gemm.cuh.
#include "kernels/lt_gemm.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "kernels/request_checks.hpp"
#include "kernels/seeded_values.cuh"

namespace parasim::kernels::detail {
namespace {

// Seed streams of the two operands (seeded_values.cuh).
constexpr std::uint64_t kStreamA = 1;
constexpr std::uint64_t kStreamB = 2;

cudaDataType_t cuda_type(GpuDtype dtype) {
  switch (dtype) {
    case GpuDtype::kBf16: return CUDA_R_16BF;
    case GpuDtype::kFp16: return CUDA_R_16F;
    case GpuDtype::kFp32: return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

// gemm_bench.hpp: fp32 accumulation for every dtype; TF32 tensor cores only when asked for fp32.
cublasComputeType_t compute_type(const GemmRequest& request) {
  if (request.dtype == GpuDtype::kFp32 && request.allow_tf32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

std::size_t to_size(std::int64_t v) { return static_cast<std::size_t>(v); }

// A stored rows x cols column-major matrix (ld = rows), strided-batched when batch > 1.
LtOwner<cublasLtMatrixLayout_t> make_layout(GpuDtype dtype, std::int64_t rows, std::int64_t cols,
                                            std::int64_t batch) {
  cublasLtMatrixLayout_t raw = nullptr;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&raw, cuda_type(dtype), static_cast<std::uint64_t>(rows),
                                          static_cast<std::uint64_t>(cols), rows));
  LtOwner<cublasLtMatrixLayout_t> layout(raw);
  if (batch > 1) {
    const auto count = static_cast<std::int32_t>(batch);  // validate_gemm: fits
    const std::int64_t stride = rows * cols;              // elements
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(raw, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                  sizeof(count)));
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(
        raw, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
  }
  return layout;
}

std::string shape_text(const GemmRequest& r) {
  return std::string{gpu_dtype_name(r.dtype)} + " m " + std::to_string(r.m) + " n " +
         std::to_string(r.n) + " k " + std::to_string(r.k) + " batch " + std::to_string(r.batch) +
         " " + (r.transpose_a ? "T" : "N") + (r.transpose_b ? "T" : "N");
}

}  // namespace

LtGemm::LtGemm(const GemmRequest& request, cudaStream_t stream) : request_(request) {
  validate_gemm(request);
  const GpuDtype dtype = request.dtype;
  const std::int64_t m = request.m, n = request.n, k = request.k, batch = request.batch;
  const std::size_t a_elements = to_size(m) * to_size(k) * to_size(batch);
  const std::size_t b_elements = to_size(k) * to_size(n) * to_size(batch);
  const std::size_t d_elements = to_size(m) * to_size(n) * to_size(batch);
  a_ = DeviceBuffer(a_elements * dtype_bytes(dtype));
  b_ = DeviceBuffer(b_elements * dtype_bytes(dtype));
  d_ = DeviceBuffer(d_elements * dtype_bytes(dtype));
  workspace_ = DeviceBuffer(kLtWorkspaceBytes);
  fill_seeded(a_.get(), dtype, a_elements, request_.seed, kStreamA, stream);
  fill_seeded(b_.get(), dtype, b_elements, request_.seed, kStreamB, stream);
  // The matmul may run on another stream (the overlap probe): the inputs must be there first.
  CUDA_CHECK(cudaStreamSynchronize(stream));

  cublasLtHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasLtCreate(&handle));
  handle_.reset(handle);

  cublasLtMatmulDesc_t operation = nullptr;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&operation, compute_type(request), CUDA_R_32F));
  operation_.reset(operation);
  const cublasOperation_t transa = request.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t transb = request.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(operation, CUBLASLT_MATMUL_DESC_TRANSA, &transa,
                                              sizeof(transa)));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(operation, CUBLASLT_MATMUL_DESC_TRANSB, &transb,
                                              sizeof(transb)));

  // Stored shapes, see lt_gemm.cuh.
  a_layout_ =
      request.transpose_a ? make_layout(dtype, k, m, batch) : make_layout(dtype, m, k, batch);
  b_layout_ =
      request.transpose_b ? make_layout(dtype, n, k, batch) : make_layout(dtype, k, n, batch);
  d_layout_ = make_layout(dtype, m, n, batch);

  cublasLtMatmulPreference_t raw_preference = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&raw_preference));
  const LtOwner<cublasLtMatmulPreference_t> preference(raw_preference);
  const std::size_t workspace_bytes = kLtWorkspaceBytes;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      raw_preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
      sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(handle, operation, a_layout_.get(), b_layout_.get(),
                                              d_layout_.get(), d_layout_.get(), raw_preference, 1,
                                              &result, &returned));
  if (returned < 1 || result.state != CUBLAS_STATUS_SUCCESS) {
    throw GpuError("cublasLtMatmulAlgoGetHeuristic found no algorithm for " +
                   shape_text(request));
  }
  algo_ = result.algo;
}

void LtGemm::enqueue(cudaStream_t stream) const {
  CUBLAS_CHECK(cublasLtMatmul(handle_.get(), operation_.get(), &alpha_, a_.get(), a_layout_.get(),
                              b_.get(), b_layout_.get(), &beta_, d_.get(), d_layout_.get(),
                              d_.get(), d_layout_.get(), &algo_, workspace_.get(),
                              workspace_.bytes(), stream));
}

double LtGemm::flops() const {
  return 2.0 * static_cast<double>(request_.m) * static_cast<double>(request_.n) *
         static_cast<double>(request_.k) * static_cast<double>(request_.batch);
}

GemmCheck LtGemm::check(int checks) const {
  CUDA_CHECK(cudaDeviceSynchronize());
  const GemmRequest& r = request_;
  const std::size_t m = to_size(r.m), n = to_size(r.n), k = to_size(r.k), batch = to_size(r.batch);
  const std::size_t element_bytes = dtype_bytes(r.dtype);
  // gemm_bench.hpp: |c - ref| / max(|ref|, 1e-3 sqrt(k)); the floor keeps cancellations (ref
  // near 0 while the terms are O(1)) from reading as large relative errors.
  const double floor = 1e-3 * std::sqrt(static_cast<double>(k));
  GemmCheck result;
  for (int c = 0; c < checks; ++c) {
    std::size_t b = 0, i = 0, j = 0;
    if (c == 1) {
      b = batch - 1;
      i = m - 1;
      j = n - 1;
    } else if (c > 1) {
      const std::uint64_t h = splitmix64(r.seed ^ (0xc4ec0000ULL + static_cast<std::uint64_t>(c)));
      b = static_cast<std::size_t>(h % batch);
      i = static_cast<std::size_t>((h >> 21) % m);
      j = static_cast<std::size_t>((h >> 42) % n);
    }
    double reference = 0;
    for (std::size_t l = 0; l < k; ++l) {
      const std::size_t a_index = b * m * k + (r.transpose_a ? l + i * k : i + l * m);
      const std::size_t b_index = b * k * n + (r.transpose_b ? j + l * n : l + j * k);
      reference += static_cast<double>(stored_uniform(r.dtype, r.seed, kStreamA, a_index)) *
                   static_cast<double>(stored_uniform(r.dtype, r.seed, kStreamB, b_index));
    }
    const std::size_t d_index = b * m * n + i + j * m;
    unsigned char raw[4] = {};
    CUDA_CHECK(cudaMemcpy(raw, d_.as<unsigned char>() + d_index * element_bytes, element_bytes,
                          cudaMemcpyDeviceToHost));
    float value = 0;
    if (r.dtype == GpuDtype::kBf16) {
      __nv_bfloat16 v;
      std::memcpy(&v, raw, sizeof(v));
      value = to_float(v);
    } else if (r.dtype == GpuDtype::kFp16) {
      __half v;
      std::memcpy(&v, raw, sizeof(v));
      value = to_float(v);
    } else {
      std::memcpy(&value, raw, sizeof(value));
    }
    double error = std::abs(static_cast<double>(value) - reference) /
                   std::max(std::abs(reference), floor);
    if (!std::isfinite(error)) error = std::numeric_limits<double>::infinity();
    result.max_relative_error = std::max(result.max_relative_error, error);
    ++result.checked;
  }
  return result;
}

}  // namespace parasim::kernels::detail
