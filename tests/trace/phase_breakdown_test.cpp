// The step per phase, computed once for traces and simulations: exact on hand-made timelines.
#include "calibrate/trace/phase_breakdown.hpp"

#include <doctest/doctest.h>

namespace parasim::calib::trace {

TEST_CASE("phase breakdown: unions, exposed communication and idle time, per step") {
  std::vector<TimedWork> w = {{0, 10, false, TracePhase::kForward},
                              {5, 8, false, TracePhase::kForward},
                              {10, 30, false, TracePhase::kBackward},
                              {25, 40, true, TracePhase::kForward},
                              {45, 50, false, TracePhase::kOptimizer}};
  const PhaseBreakdown b = phase_breakdown(w, 1);
  CHECK(b.window_us == 50);
  CHECK(b.phase_us[0] == 10);
  CHECK(b.phase_us[1] == 20);
  CHECK(b.phase_us[2] == 5);
  CHECK(b.compute_us == 35);
  CHECK(b.communication_us == 15);
  CHECK(b.exposed_comm_us == 10);  // 25..40 less the overlap 25..30
  CHECK(b.idle_us == 5);           // 40..45
  CHECK(b.compute_us + b.exposed_comm_us + b.idle_us == b.window_us);
  const PhaseBreakdown two = phase_breakdown(w, 2);
  CHECK(two.window_us == 25);
  CHECK(two.exposed_comm_us == 5);
  CHECK_THROWS_AS(phase_breakdown(w, 0), std::invalid_argument);
  CHECK(phase_breakdown({}, 1).window_us == 0);
}

TEST_CASE("phase breakdown of a rank: collectives are communication, the rest compute") {
  RankTrace r;
  r.steps = 1;
  TraceKernel a;
  a.start_us = 0;
  a.duration_us = 10;
  a.kind = KernelClass::kGemm;
  TraceKernel n = a;
  n.start_us = 5;
  n.duration_us = 20;
  n.kind = KernelClass::kCollective;
  r.kernels = {a, n};
  const PhaseBreakdown b = trace_phases(r);
  CHECK(b.window_us == 25);
  CHECK(b.compute_us == 10);
  CHECK(b.exposed_comm_us == 15);
  CHECK(b.idle_us == 0);
}

}  // namespace parasim::calib::trace
