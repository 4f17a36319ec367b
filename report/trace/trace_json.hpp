#pragma once
// parasim::report trace JSON — compare-trace's figures for scripts (compare-trace --json): the
// coverage, the kernel classes priced, the largest priced kernels and the step per phase, run
// beside parasim. Units are in the key names (_us: microseconds per rank per profiled step unless
// the key says per call; fractions are 0..1).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "calibrate/trace/phase_breakdown.hpp"
#include "calibrate/trace/trace_fit.hpp"
#include "calibrate/trace/trace_pricing.hpp"

namespace parasim::report {

nlohmann::json trace_comparison_json(const std::vector<std::string>& traces,
                                     const std::string& scenario, const calib::trace::TraceFit& fit,
                                     const calib::trace::TracePricing& pricing,
                                     const calib::trace::PhaseBreakdown& traced,
                                     const calib::trace::PhaseBreakdown& simulated);

}  // namespace parasim::report
