// gpu_dtype_name(): host-only, compiled with and without CUDA.
#include "kernels/gemm_bench.hpp"

namespace parasim::kernels {

const char* gpu_dtype_name(GpuDtype dtype) {
  switch (dtype) {
    case GpuDtype::kBf16: return "bf16";
    case GpuDtype::kFp16: return "fp16";
    case GpuDtype::kFp32: return "fp32";
  }
  return "unknown";
}

}  // namespace parasim::kernels
