#pragma once
// parasim::strat AdamW step cost — a memory-bound pass over the parameters a device updates.
//
// Mixed precision (Micikevicius et al. 2018, arXiv 1710.03740; Megatron's distributed optimizer):
// per parameter the step reads the fp32 gradient (4 B), the fp32 master weight (4), the two fp32
// moments (4 + 4) and writes the master weight, both moments (12) and the bf16 copy (2): 30 bytes.
// In fp32 training there is no bf16 copy and gradients are fp32: 28 bytes. FLOPs (~10 per
// parameter) are negligible next to the bytes on any current GPU.

#include "costmodel/cost_model.hpp"
#include "strategies/framework/host_plan.hpp"

namespace parasim::strat {

constexpr double kAdamwBytesPerParamMixed = 30.0;
constexpr double kAdamwBytesPerParamFp32 = 28.0;

// Bytes moved by one AdamW step over `parameters` parameters.
inline double adamw_step_bytes(double parameters, bool mixed_precision) {
  return parameters * (mixed_precision ? kAdamwBytesPerParamMixed : kAdamwBytesPerParamFp32);
}

// GPU time of a device's AdamW step over `updated` parameters: the step's bytes plus the
// framework's casts, norms and copies around it (`framework_bytes_per_parameter`,
// FrameworkCounts::step_bytes_per_parameter), as one memory-bound op after one queued-kernel gap;
// its launches are the host's (optimizer_host). The builder and the planner's screen both use it.
inline sim::Time adamw_step_time(double updated, bool mixed_precision,
                                 double framework_bytes_per_parameter,
                                 const cost::CostModel& costs) {
  const double bytes =
      adamw_step_bytes(updated, mixed_precision) + updated * framework_bytes_per_parameter;
  return costs.memory_bound_body(cost::Bytes{bytes}) + queued_kernel_gap(costs.device());
}

}  // namespace parasim::strat
