#pragma once
// parasim::report trace text — what calibrate --from-trace and compare-trace print: the
// coverage of a trace import (kernel time per class, what was fitted, what was not and why),
// the kernel classes priced by the cost model, and the step per phase beside the simulation.
// Times in ms per rank per profiled step unless a heading says otherwise; errors as
// (parasim - measured) / measured in percent.

#include <string>

#include "calibrate/trace/phase_breakdown.hpp"
#include "calibrate/trace/trace_fit.hpp"
#include "calibrate/trace/trace_pricing.hpp"

namespace parasim::report {

std::string format_trace_coverage(const calib::trace::TraceFit& fit);
std::string format_trace_pricing(const calib::trace::TracePricing& pricing);
// `traced`: the mean over the profiled ranks; `simulated`: the scenario's first simulated GPU.
std::string format_trace_phases(const calib::trace::PhaseBreakdown& traced,
                                const calib::trace::PhaseBreakdown& simulated);

// The mean of several ranks' breakdowns (steps: the first's). Throws on an empty list.
calib::trace::PhaseBreakdown mean_breakdown(const std::vector<calib::trace::PhaseBreakdown>& all);

}  // namespace parasim::report
