#pragma once
// parasim::cost kernel efficiency JSON — reads a scenario's "cluster.device.kernel_efficiency"
// object (docs/scenario.md) over a device's KernelEfficiency, field by field, reporting every
// problem with its JSON path.
//
//   "kernel_efficiency": {
//     "gemm_ceiling": {"bf16": 0.72, "fp16": 0.72, "tf32": 0.68, "fp32": 0.72, "fp8": 0.65},
//     "gemm_k_half": 256,
//     "min_gemm_body": "5 us",
//     "memory_efficiency": 0.85,
//     "flash_attention": {"head_dims": [64, 128], "seq_lens": [1024, 8192],
//                         "forward": [[0.4, 0.5], [0.45, 0.55]],
//                         "backward": [[0.3, 0.4], [0.35, 0.45]]}}
//
// Every key is optional; a key not given keeps the device's value (a preset's measurement or the
// conservative default). "flash_attention", when given, replaces the whole table and needs all
// four keys: one row per head dimension, one column per sequence length, at most
// kMaxFlashAxis entries per axis. Giving the object marks the kernel efficiencies calibrated
// (the user vouches for them; no uncalibrated-device warning).

#include <nlohmann/json.hpp>
#include <string>

#include "costmodel/diagnostics.hpp"
#include "costmodel/kernel_efficiency.hpp"

namespace parasim::cost {

// Largest number of head dimensions or sequence lengths in a FlashAttention table.
inline constexpr std::size_t kMaxFlashAxis = 64;

void read_kernel_efficiency(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                            KernelEfficiency& kernels);

}  // namespace parasim::cost
