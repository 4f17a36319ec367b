#pragma once
// parasim::report simulated phases — a simulated device's step in the form of a profiled rank's
// (calibrate/trace/phase_breakdown.hpp), for compare-trace: its GPU streams' ops, compute ops by
// their category (backward, optimizer; every other compute category counts as forward) and
// collectives and transfers as communication from each member's own start (its arrival: a
// profiled NCCL kernel likewise runs from its launch, waiting for the group), per simulated step.
// Runs over several steps with warm-up steps (asynchronous schedules, optimizer post-validation)
// count the steady state only: the ops that start from `steady_from_s` on (StepReport's
// window_begin_s), over the steps after the warm-up.

#include "calibrate/trace/phase_breakdown.hpp"
#include "sim/engine.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::report {

calib::trace::PhaseBreakdown simulated_phases(const strat::BuiltWorkload& built,
                                              const sim::SimResult& result, sim::DeviceId device,
                                              double steady_from_s);

}  // namespace parasim::report
