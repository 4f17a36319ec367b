#include "calibrate/trace/gpu_trace.hpp"

#include <algorithm>

namespace parasim::calib::trace {

const char* kernel_class_name(KernelClass c) {
  switch (c) {
    case KernelClass::kGemm:
      return "gemm";
    case KernelClass::kAttention:
      return "attention";
    case KernelClass::kCollective:
      return "collective";
    case KernelClass::kMemoryBound:
      return "memory-bound";
    case KernelClass::kConvolution:
      return "convolution";
    case KernelClass::kCopy:
      return "copy";
    case KernelClass::kOther:
      return "other";
  }
  return "other";
}

const char* trace_phase_name(TracePhase p) {
  switch (p) {
    case TracePhase::kForward:
      return "forward";
    case TracePhase::kBackward:
      return "backward";
    case TracePhase::kOptimizer:
      return "optimizer";
  }
  return "forward";
}

double TraceCollective::message_bytes() const {
  const double in = static_cast<double>(in_elements) * element_bytes;
  const double out = static_cast<double>(out_elements) * element_bytes;
  // All-gather: the gathered buffer (its output); every other kind: its input (reduce-scatter's
  // whole buffer before the scatter, all-to-all's whole send buffer, all-reduce's buffer).
  return kind == cost::CollectiveKind::kAllGather ? out : in;
}

double RankTrace::gpu_window_us() const {
  if (kernels.empty()) return 0;
  double first = kernels.front().start_us, last = kernels.front().end_us();
  for (const auto& k : kernels) {
    first = std::min(first, k.start_us);
    last = std::max(last, k.end_us());
  }
  return last - first;
}

}  // namespace parasim::calib::trace
