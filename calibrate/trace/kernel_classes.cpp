#include "calibrate/trace/kernel_classes.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace parasim::calib::trace {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains_any(const std::string& text, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return text.find(n) != std::string::npos; });
}

// Lower case with every '_' removed: "_allgather_base" -> "allgatherbase".
std::string squashed(std::string_view text) {
  std::string out = lower(text);
  out.erase(std::remove(out.begin(), out.end(), '_'), out.end());
  return out;
}

}  // namespace

KernelClass classify_kernel(std::string_view kernel_name) {
  const std::string n = lower(kernel_name);
  if (n.rfind("nccl", 0) == 0 || n.find(" nccl") != std::string::npos) {
    return KernelClass::kCollective;
  }
  if (contains_any(n, {"convolution", "conv2d", "conv3d", "conv1d", "conv_", "implicit_gemm",
                       "cudnn::cnn", "scudnn", "cask_cudnn", "wgrad", "dgrad"})) {
    return KernelClass::kConvolution;
  }
  if (contains_any(n, {"flash", "fmha", "sdpa", "attention", "_attn_"})) {
    return KernelClass::kAttention;
  }
  if (contains_any(n,
                   {"gemm", "gemv", "nvjet", "cublas", "cutlass", "triton_tem_", "splitkreduce"})) {
    return KernelClass::kGemm;
  }
  if (contains_any(n, {"at::native::", "elementwise", "reduce_kernel", "norm", "softmax",
                       "multi_tensor_apply", "transformer_engine", "cast_transpose", "triton_poi_",
                       "triton_red_", "triton_per_", "cub::", "bn_", "nchwto", "nhwcto", "dropout",
                       "adam", "fill", "copy"})) {
    return KernelClass::kMemoryBound;
  }
  return KernelClass::kOther;
}

KernelClass classify_launched_kernel(KernelClass by_name, std::string_view launch_op_name) {
  if (by_name != KernelClass::kGemm && by_name != KernelClass::kOther &&
      by_name != KernelClass::kMemoryBound) {
    return by_name;
  }
  const std::string op = lower(launch_op_name);
  if (op.find("convolution") != std::string::npos) {
    return by_name == KernelClass::kMemoryBound ? by_name : KernelClass::kConvolution;
  }
  if (by_name != KernelClass::kMemoryBound && (op.rfind("aten::_flash_attention", 0) == 0 ||
                                               op.rfind("aten::_scaled_dot_product", 0) == 0 ||
                                               op.rfind("aten::_efficient_attention", 0) == 0)) {
    return KernelClass::kAttention;
  }
  return by_name;
}

std::optional<cost::CollectiveKind> profiler_collective(std::string_view collective_name) {
  const std::string n = squashed(collective_name);
  if (n.rfind("allreduce", 0) == 0) return cost::CollectiveKind::kAllReduce;
  if (n.rfind("allgather", 0) == 0) return cost::CollectiveKind::kAllGather;
  if (n.rfind("reducescatter", 0) == 0) return cost::CollectiveKind::kReduceScatter;
  if (n.rfind("alltoall", 0) == 0) return cost::CollectiveKind::kAllToAll;
  if (n.rfind("broadcast", 0) == 0) return cost::CollectiveKind::kBroadcast;
  if (n == "send" || n == "recv" || n == "sendrecv") return cost::CollectiveKind::kSendRecv;
  return std::nullopt;
}

int profiler_dtype_bytes(std::string_view dtype) {
  std::string n = lower(dtype);
  if (n.rfind("c10::", 0) == 0) n = n.substr(5);
  if (n == "float" || n == "float32" || n == "int" || n == "int32" || n == "uint32") return 4;
  if (n == "double" || n == "float64" || n == "long" || n == "long int" || n == "int64") return 8;
  if (n == "bfloat16" || n == "half" || n == "float16" || n == "short" || n == "int16") return 2;
  if (n == "byte" || n == "char" || n == "bool" || n == "int8" || n == "uint8" ||
      n.rfind("float8", 0) == 0) {
    return 1;
  }
  return 0;
}

std::optional<cost::Dtype> profiler_gemm_dtype(std::string_view input_type) {
  std::string n = lower(input_type);
  if (n.rfind("c10::", 0) == 0) n = n.substr(5);
  if (n == "bfloat16") return cost::Dtype::kBf16;
  if (n == "half" || n == "float16") return cost::Dtype::kFp16;
  if (n == "float" || n == "float32") return cost::Dtype::kFp32;
  if (n.rfind("float8", 0) == 0) return cost::Dtype::kFp8;
  return std::nullopt;
}

std::optional<cost::Dtype> gemm_dtype_from_kernel_name(std::string_view kernel_name) {
  const std::string n = lower(kernel_name);
  if (contains_any(n, {"e4m3", "e5m2", "fp8"})) return cost::Dtype::kFp8;
  if (n.find("bf16") != std::string::npos) return cost::Dtype::kBf16;
  if (contains_any(n, {"fp16", "_f16", "h1688", "h16816", "hgemm"})) return cost::Dtype::kFp16;
  if (contains_any(n, {"s1688gemm", "s16816gemm", "sgemm", "tf32"})) return cost::Dtype::kFp32;
  return std::nullopt;
}

}  // namespace parasim::calib::trace
