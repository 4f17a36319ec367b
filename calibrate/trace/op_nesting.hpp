#pragma once
// parasim::calib::trace op nesting — what the readers of both trace formats share once they
// have a rank's ops (CPU ops and annotations, with thread and span) and its kernels:
//   * each op's phase: the outermost phase marker above it on its thread, or on it: backward
//     under an autograd node ("autograd::engine::evaluate_function: ...", "...Backward0"),
//     optimizer under PyTorch's optimizer hooks ("Optimizer.step#AdamW.step",
//     "Optimizer.zero_grad#..."); forward otherwise;
//   * the profiled steps: PyTorch's "ProfilerStep#N" annotations (torch.profiler.schedule);
//     with them, kernels launched outside every step are dropped;
//   * each kernel's phase, from the op that launched it, and its class refined by that op
//     (kernel_classes.hpp classify_launched_kernel);
//   * kernels sorted by (start, stream, name).

#include <cstdint>
#include <vector>

#include "calibrate/trace/gpu_trace.hpp"

namespace parasim::calib::trace {

// The innermost op of `ops` on `thread` whose span holds `time_us`: O(log n + nesting depth) per
// query after an O(n log n) index. -1 when none does. Spans that overlap without nesting are
// read as nested in the earlier one (a trace's ops on one thread nest).
class OpLocator {
 public:
  explicit OpLocator(const std::vector<TraceOp>& ops);
  std::int64_t innermost(std::int64_t thread, double time_us) const;

 private:
  struct Span {
    double start_us, end_us;
    std::int64_t op;
    std::int64_t parent;  // index of the enclosing span in the same thread's list, or -1
  };
  std::vector<std::pair<std::int64_t, std::vector<Span>>> threads_;  // sorted by thread
};

// Phases, steps, kernel phases and order, as above. Reports the number of steps in
// trace.steps.
void finish_rank_trace(RankTrace& trace);

}  // namespace parasim::calib::trace
