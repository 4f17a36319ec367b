#pragma once
// parasim::strat AdamW step cost — a memory-bound pass over the parameters a device updates.
//
// Mixed precision (Micikevicius et al. 2018, arXiv 1710.03740; Megatron's distributed optimizer):
// per parameter the step reads the fp32 gradient (4 B), the fp32 master weight (4), the two fp32
// moments (4 + 4) and writes the master weight, both moments (12) and the bf16 copy (2): 30 bytes.
// In fp32 training there is no bf16 copy and gradients are fp32: 28 bytes. FLOPs (~10 per
// parameter) are negligible next to the bytes on any current GPU.

namespace parasim::strat {

constexpr double kAdamwBytesPerParamMixed = 30.0;
constexpr double kAdamwBytesPerParamFp32 = 28.0;

// Bytes moved by one AdamW step over `parameters` parameters.
inline double adamw_step_bytes(double parameters, bool mixed_precision) {
  return parameters * (mixed_precision ? kAdamwBytesPerParamMixed : kAdamwBytesPerParamFp32);
}

}  // namespace parasim::strat
