#pragma once
// parasim::strat pipeline schedules — the order in which each stage runs its forward (F) and
// backward (B) passes over the micro-batches of one step.
//
// GPipe (Huang et al. 2019, arXiv 1811.06965): all m forwards, then all m backwards (latest
//   micro-batch first). Activations of m micro-batches are alive at once on every stage.
// 1F1B with flush (PipeDream-Flush; Narayanan et al. 2021, arXiv 2104.04473): stage s runs
//   min(P-s-1, m) warm-up forwards, then alternates one forward and one backward, then drains the
//   remaining backwards. At most P-s micro-batches are in flight on stage s.
// Both have the same bubble, (P-1)/(m+P-1) of the step when stage times are equal.

#include <vector>

#include "strategies/scenario.hpp"

namespace parasim::strat {

struct PipelineItem {
  bool forward = true;
  int micro_batch = 0;
};

// The program of `stage` (0..stages-1) for `micro_batches` micro-batches.
std::vector<PipelineItem> pipeline_order(PipelineSchedule schedule, int stage, int stages,
                                         int micro_batches);

}  // namespace parasim::strat
