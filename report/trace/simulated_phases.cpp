#include "report/trace/simulated_phases.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace parasim::report {

calib::trace::PhaseBreakdown simulated_phases(const strat::BuiltWorkload& built,
                                              const sim::SimResult& result, sim::DeviceId device,
                                              double steady_from_s) {
  const bool warmup = built.steps.warmup > 0;
  using calib::trace::TracePhase;
  const sim::Workload& w = built.workload;
  std::vector<calib::trace::TimedWork> work;
  for (sim::OpId o = 0; o < w.op_count(); ++o) {
    const sim::Op& op = w.op(o);
    const sim::Stream& stream = w.stream(op.stream);
    if (stream.device != device || stream.kind != sim::StreamKind::kDevice) continue;
    if (warmup && result.op_start[o].to_seconds() < steady_from_s) continue;
    calib::trace::TimedWork item;
    item.begin_us = result.op_start[o].to_seconds() * 1e6;
    item.end_us = result.op_end[o].to_seconds() * 1e6;
    item.communication = op.kind == sim::OpKind::kGroupMember;
    const std::string& category = w.text(op.category);
    item.phase = category == "backward"    ? TracePhase::kBackward
                 : category == "optimizer" ? TracePhase::kOptimizer
                                           : TracePhase::kForward;
    work.push_back(item);
  }
  const int steps = warmup ? built.steps.total - built.steps.warmup : built.steps.total;
  return calib::trace::phase_breakdown(std::move(work), std::max(1, steps));
}

}  // namespace parasim::report
