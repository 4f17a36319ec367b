#pragma once
// parasim::strat scenario files — what every command that reads a scenario reads: a scenario
// file, or a plan file that `parasim plan --out` wrote,
//   {"parasim_plan": 1, "scenario": {...a full scenario...}, ...}
// whose "scenario" is the one read (every other key of a plan is the planner's record, ignored
// here; docs/plan.md). `simulate`, `validate`, `plan`, `compare` and `export` all read through
// this one function, so a plan file is read alike everywhere, and a problem inside a plan's
// scenario is reported with the path into the file as written: `plan.json: /scenario/parallel/tp`.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "strategies/input/scenario.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::strat {

// The version of the plan format this parasim reads.
inline constexpr int kPlanFormatVersion = 1;

struct ScenarioFile {
  Scenario scenario;
  nlohmann::json document;  // the scenario's JSON object (a plan's "scenario")
  std::string file;         // as given, for messages
  std::string path_prefix;  // "" for a scenario file, "/scenario" for a plan
  bool is_plan = false;
};

// `e`'s problems with `prefix` before every JSON path (those starting with "/"; a command-line
// option's stay as they are): a plan's scenario problems under "/scenario".
cost::InputError under_prefix(const cost::InputError& e, const std::string& prefix);

// Parses `text` read from `file_name`. Throws cost::InputError (every problem at once).
ScenarioFile parse_scenario_file(std::string_view text, const std::string& file_name,
                                 const ScenarioLimits& limits = {});
// Reads the file first (regular files only, 16 MiB cap, as every input). Throws
// cost::InputError.
ScenarioFile load_scenario_file(const std::string& path, const ScenarioLimits& limits = {});

}  // namespace parasim::strat
