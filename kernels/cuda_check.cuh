#pragma once
// parasim::kernels internal: error checks shared by the .cu files (never included by the public
// headers). A failed CUDA, cuBLAS, cuSOLVER or NCCL call throws GpuError naming the call, the
// library's error name and text, and file:line; require_device() throws GpuUnavailable when
// there is no driver or no device, which callers turn into "nothing to measure on".
//
//   CUDA_CHECK(cudaMalloc(&p, bytes));
//   CUBLAS_CHECK(cublasLtMatmul(...));      // cublasStatus_t (cuBLAS and cuBLASLt)
//   CUSOLVER_CHECK(cusolverDnCreate(&h));   // cusolverStatus_t
//   NCCL_CHECK(ncclAllReduce(...));         // ncclResult_t, only when PARASIM_HAVE_NCCL
//   CUDA_CHECK_LAUNCH();                    // after a <<<...>>> launch: cudaGetLastError()

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cusolver_common.h>

#if defined(PARASIM_HAVE_NCCL) && PARASIM_HAVE_NCCL
#include <nccl.h>
#endif

#include <string>

#include "kernels/gpu_error.hpp"

namespace parasim::kernels::detail {

// "call failed: NAME (text) at file:line".
inline std::string gpu_failure_text(const char* call, const std::string& name,
                                    const std::string& text, const char* file, int line) {
  return std::string{call} + " failed: " + name + " (" + text + ") at " + file + ":" +
         std::to_string(line);
}

inline void check_cuda(cudaError_t error, const char* call, const char* file, int line) {
  if (error == cudaSuccess) return;
  throw GpuError(gpu_failure_text(call, cudaGetErrorName(error), cudaGetErrorString(error), file,
                                  line));
}

// cublasLtGetStatusName/String cover every cublasStatus_t (cuBLAS and cuBLASLt share the enum).
inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw GpuError(gpu_failure_text(call, cublasLtGetStatusName(status),
                                  cublasLtGetStatusString(status), file, line));
}

// cuSOLVER has no status-to-string function; the names are those of cusolver_common.h.
inline const char* cusolver_status_name(cusolverStatus_t status) {
  switch (status) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED:
      return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    default: return "cusolverStatus_t";
  }
}

inline void check_cusolver(cusolverStatus_t status, const char* call, const char* file,
                           int line) {
  if (status == CUSOLVER_STATUS_SUCCESS) return;
  throw GpuError(gpu_failure_text(call, cusolver_status_name(status),
                                  "status " + std::to_string(static_cast<int>(status)), file,
                                  line));
}

#if defined(PARASIM_HAVE_NCCL) && PARASIM_HAVE_NCCL
inline void check_nccl(ncclResult_t result, const char* call, const char* file, int line) {
  if (result == ncclSuccess) return;
  throw GpuError(gpu_failure_text(call, "ncclResult_t " + std::to_string(static_cast<int>(result)),
                                  ncclGetErrorString(result), file, line));
}
#endif

// Makes `device` current. Throws GpuUnavailable when the runtime finds no driver or no device
// (cudaGetDeviceCount fails with cudaErrorInsufficientDriver / cudaErrorNoDevice or reports 0,
// CUDA Runtime API) or when `device` is not one of them; GpuError if cudaSetDevice fails.
inline void require_device(int device, const char* file, int line) {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess || count <= 0) {
    throw GpuUnavailable(
        error != cudaSuccess
            ? std::string{"no usable CUDA device (cudaGetDeviceCount: "} + cudaGetErrorName(error) +
                  ": " + cudaGetErrorString(error) + ")"
            : std::string{"no usable CUDA device (the driver reports 0 devices)"});
  }
  if (device < 0 || device >= count) {
    throw GpuUnavailable("CUDA device " + std::to_string(device) + " does not exist (" +
                         std::to_string(count) + " visible devices)");
  }
  check_cuda(cudaSetDevice(device), "cudaSetDevice", file, line);
}

}  // namespace parasim::kernels::detail

#define CUDA_CHECK(call) ::parasim::kernels::detail::check_cuda((call), #call, __FILE__, __LINE__)
#define CUDA_CHECK_LAUNCH() \
  ::parasim::kernels::detail::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
#define CUBLAS_CHECK(call) \
  ::parasim::kernels::detail::check_cublas((call), #call, __FILE__, __LINE__)
#define CUSOLVER_CHECK(call) \
  ::parasim::kernels::detail::check_cusolver((call), #call, __FILE__, __LINE__)
#if defined(PARASIM_HAVE_NCCL) && PARASIM_HAVE_NCCL
#define NCCL_CHECK(call) ::parasim::kernels::detail::check_nccl((call), #call, __FILE__, __LINE__)
#endif
#define REQUIRE_DEVICE(device) \
  ::parasim::kernels::detail::require_device((device), __FILE__, __LINE__)
