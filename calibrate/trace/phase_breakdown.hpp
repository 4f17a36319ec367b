#pragma once
// parasim::calib::trace phase breakdown — where one GPU's step time goes, computed the same way
// for a profiled rank (trace_phases) and for a simulated device (report/simulated_phases), so
// that compare-trace sets like against like.
//
// From the GPU work of one device over its window (first start to last end), per step:
//   phase_us[p]      the union of the compute work (kernels that are not collectives) of phase p
//   compute_us       the union of all compute work
//   communication_us the union of the collectives
//   exposed_comm_us  collectives while no compute runs: communication_us minus its overlap
//   idle_us          nothing runs (the GPU waits for the host or for another rank):
//                    window - (compute union collectives)
// Invariants: compute_us + exposed_comm_us + idle_us = window_us (to rounding); every figure
// >= 0; phase_us[p] <= compute_us <= sum of phase_us. Microseconds per step (the window and
// totals divided by `steps`).

#include <array>
#include <vector>

#include "calibrate/trace/gpu_trace.hpp"

namespace parasim::calib::trace {

struct TimedWork {
  double begin_us = 0;
  double end_us = 0;
  bool communication = false;
  TracePhase phase = TracePhase::kForward;  // for compute work
};

struct PhaseBreakdown {
  int steps = 1;
  double window_us = 0;
  std::array<double, kTracePhases> phase_us{};
  double compute_us = 0;
  double communication_us = 0;
  double exposed_comm_us = 0;
  double idle_us = 0;
};

// Throws std::invalid_argument when steps < 1.
PhaseBreakdown phase_breakdown(std::vector<TimedWork> work, int steps);

// A profiled rank's breakdown: its kernels (copies as compute), per profiled step (the whole
// trace as one step when it marks none).
PhaseBreakdown trace_phases(const RankTrace& rank);

}  // namespace parasim::calib::trace
