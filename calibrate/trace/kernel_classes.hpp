#pragma once
// parasim::calib::trace kernel classes — which of parasim's op kinds a GPU kernel is, from its
// name alone, by the naming conventions of the libraries that emit them (first rule that matches
// wins; case-insensitive substrings):
//   NCCL         "ncclKernel_" / "ncclDevKernel_" (NCCL's src/device: ncclDevKernel_<Coll>_<Algo>_
//                <Proto>, ncclKernel_ before NCCL 2.19), the collective's kind from the name
//   convolution  "convolution", "conv2d" (1d, 3d), "conv_", "implicit_gemm", "cudnn::cnn",
//                "scudnn", "cask_cudnn", "wgrad", "dgrad" (cuDNN's and CUTLASS's convolutions,
//                whose names also hold "gemm")
//   attention    "flash", "fmha", "sdpa", "attention", "_attn_" (FlashAttention 2/3, cuDNN's
//                fused SDPA, xFormers' and PyTorch's memory-efficient attention, Triton's)
//   GEMM         "gemm", "gemv", "nvjet" (cuBLAS's Hopper/Blackwell kernels), "cublas", "cutlass",
//                "triton_tem_" (Inductor's GEMM templates), "splitkreduce" (cuBLAS split-K)
//   memory-bound PyTorch's ATen kernels ("at::native::", "elementwise", "reduce_kernel"),
//                norms, softmax, "multi_tensor_apply", Transformer Engine's casts and
//                transposes, Inductor's "triton_poi_" / "triton_red_" / "triton_per_", cub's
//                scans and sorts, cuDNN's batch norm and layout transforms ("bn_", "nchwTo")
// Anything else is kOther and is listed by name in the coverage report.

#include <optional>
#include <string_view>

#include "calibrate/trace/gpu_trace.hpp"

namespace parasim::calib::trace {

KernelClass classify_kernel(std::string_view kernel_name);

// A kernel's class once its launching op is known: a GEMM or unclassified kernel launched by a
// convolution op (aten::cudnn_convolution, aten::convolution_backward, ...) is a convolution, one
// launched by a fused attention op (aten::_flash_attention_*, aten::_scaled_dot_product_*,
// aten::_efficient_attention_*) is attention; otherwise the name's class.
KernelClass classify_launched_kernel(KernelClass by_name, std::string_view launch_op_name);

// The collective of PyTorch's "Collective name" metadata ("allreduce", "_allgather_base",
// "reduce_scatter_tensor_coalesced", "all_to_all", "send", "broadcast", ...); std::nullopt
// for names parasim has no kind for ("reduce", "gather", "scatter", "barrier").
std::optional<cost::CollectiveKind> profiler_collective(std::string_view collective_name);

// Bytes per element of a profiler dtype name ("Float", "BFloat16", "c10::Half", "float",
// "Byte", "Float8_e4m3fn", ...); 0 when unknown.
int profiler_dtype_bytes(std::string_view dtype);
// The cost model's GEMM dtype of a record_shapes "Input type" ("c10::BFloat16", "float", ...).
std::optional<cost::Dtype> profiler_gemm_dtype(std::string_view input_type);
// A GEMM kernel's input dtype from its name, for traces without input types (Nsight's
// emit_nvtx ranges): "bf16" -> bf16; "f16", "h1688", "h16816", "fp16" -> fp16; "e4m3", "e5m2",
// "fp8" -> fp8; "s1688gemm", "s16816gemm", "sgemm", "tf32" -> fp32 (tf32 tensor cores);
// std::nullopt when the name does not say (cuBLAS's nvjet kernels).
std::optional<cost::Dtype> gemm_dtype_from_kernel_name(std::string_view kernel_name);

}  // namespace parasim::calib::trace
