#pragma once
// parasim::exporter input — what `parasim export` reads: a scenario file, or a plan file
//   {"parasim_plan": 1, "scenario": {...a full scenario...}, ...}
// whose "scenario" is exported, read as every command reads them (strategies/input/
// scenario_file.hpp): problems in a plan's scenario are reported under /scenario, so the JSON
// Pointers point into the file as written.

#include <string>
#include <string_view>

#include "strategies/input/scenario_file.hpp"

namespace parasim::exporter {

using ExportInput = strat::ScenarioFile;
using strat::kPlanFormatVersion;

// Parses `text` read from `file_name`. Throws cost::InputError (every problem at once).
inline ExportInput parse_export_input(std::string_view text, const std::string& file_name) {
  return strat::parse_scenario_file(text, file_name);
}
// Reads the file first (regular files only, 16 MiB cap, as every input). Throws
// cost::InputError.
inline ExportInput load_export_input(const std::string& path) {
  return strat::load_scenario_file(path);
}

}  // namespace parasim::exporter
