#pragma once
// parasim::calib::trace pricing — the profiled run's own kernels priced by parasim's cost model
// for the scenario's device, per kernel class: the kernel-level half of compare-trace (the
// step-level half is phase_breakdown.hpp).
//   GEMMs       each fitted point (trace_fit.hpp): measured median x calls against
//               CostModel::gemm_body(shape) x calls (no launch: a trace's kernel time has none)
//   collectives each fitted point: measured median x calls against estimate_time of
//               CostModel::collective(kind, S, placement)
//   attention   kernels launched by PyTorch's fused attention ops (aten::_flash_attention_forward
//               / _backward with q as (batch, seq, heads, head_dim); the
//               _scaled_dot_product_{flash,cudnn,efficient}_attention ops and their backwards with
//               q as (batch, heads, seq, head_dim)) against flash_attention_time, read as causal
//               (the trace does not record the flag; a note says so)
//   norms       each fitted norm point (trace_fit.hpp): its bytes at the device's streaming rate,
//               CostModel::memory_bound_body (part of the memory-bound class)
//   the rest    measured only (their bytes are not in the trace).
// Figures are per rank per profiled step, in microseconds.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/trace/gpu_trace.hpp"
#include "calibrate/trace/trace_fit.hpp"
#include "costmodel/attention_cost.hpp"
#include "costmodel/cost_model.hpp"

namespace parasim::calib::trace {

struct ClassPricing {
  KernelClass kind = KernelClass::kOther;
  int kernels = 0;                // per rank per step
  double measured_us = 0;         // all kernels of the class
  double priced_measured_us = 0;  // the part parasim priced
  double predicted_us = 0;        // parasim's time for that part
};

struct PricedShape {
  std::string what;         // "gemm 8192x4096x4096 bf16", "all-gather 64 MiB over 8 (1 node)"
  int calls = 0;            // per rank per step
  double measured_us = 0;   // per call, median
  double predicted_us = 0;  // per call
};

struct TracePricing {
  std::vector<ClassPricing> classes;  // every class with kernels, in KernelClass order
  std::vector<PricedShape> largest;   // the 12 priced shapes with the most measured time
  std::vector<std::string> notes;
};

TracePricing price_traces(const std::vector<RankTrace>& ranks, const TraceFit& fit,
                          const cost::CostModel& costs);

// The attention problem and pass of a fused attention op; std::nullopt for another op.
std::optional<std::pair<cost::AttentionShape, cost::FlashPass>> attention_of(const TraceOp& op);

}  // namespace parasim::calib::trace
