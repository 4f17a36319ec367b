#pragma once
// parasim::exporter input — what `parasim export` reads: a scenario file, or a plan file
//   {"parasim_plan": 1, "scenario": {...a full scenario...}, ...}
// whose "scenario" is exported (the planner writes exactly that; every other key of a plan is
// ignored here). Problems in a plan's scenario are reported under /scenario, so the JSON
// Pointers point into the file as written.

#include <string>
#include <string_view>

#include "strategies/input/scenario.hpp"

namespace parasim::exporter {

struct ExportInput {
  strat::Scenario scenario;
  std::string file;         // as given, for messages
  std::string path_prefix;  // "" for a scenario file, "/scenario" for a plan
  bool is_plan = false;
};

// The version of the plan format this parasim reads.
constexpr int kPlanFormatVersion = 1;

// Parses `text` read from `file_name`. Throws cost::InputError (every problem at once).
ExportInput parse_export_input(std::string_view text, const std::string& file_name);
// Reads the file first (16 MiB cap, as every input). Throws cost::InputError.
ExportInput load_export_input(const std::string& path);

}  // namespace parasim::exporter
