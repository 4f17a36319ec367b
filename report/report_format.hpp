#pragma once
// parasim::cli report formats — the text report for people and the result JSON for machines.
//
// Result JSON (docs/result.md): top-level keys step_time_s, tokens_per_s, mfu, bubble_fraction
// (per stage), peak_memory_bytes (per simulated device), memory_breakdown_bytes (per simulated
// device, category -> bytes at its peak), comm_bytes and exposed_comm_s (by kind: tp, pp, dp),
// plus the figures the text report shows. Every key carries its unit in its name.

#include <nlohmann/json.hpp>
#include <string>

#include "report/step_report.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::cli {

std::string format_text_report(const strat::Scenario& scenario, const strat::StepReport& report);
nlohmann::ordered_json report_to_json(const strat::Scenario& scenario,
                                      const strat::StepReport& report);

}  // namespace parasim::cli
