#pragma once
// parasim::strat scenario parsing — JSON text to a validated Scenario.
//
// The format is documented in docs/scenario.md with a JSON Schema in docs/scenario.schema.json.
// Every problem of a file is collected (file, JSON path, what was expected) and thrown together
// as one cost::InputError; nothing is returned half-valid.

#include <string>
#include <string_view>

#include "costmodel/diagnostics.hpp"
#include "costmodel/json_fields.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::strat {

// Limits that refuse inputs too large to simulate rather than exhausting memory.
struct ScenarioLimits {
  std::size_t max_file_bytes = cost::kMaxInputFileBytes;  // 16 MiB of JSON
  int max_layers = 4096;
  int max_gpus = 1 << 20;                   // 1,048,576 GPUs
  int max_micro_batches = 1 << 16;
  // `parasim plan`: a missing or empty "parallel" section is the planner's to choose; the scenario
  // is then read with dp = every GPU, no layout rule checked, and Scenario::layout_given false.
  bool layout_optional = false;
};

// Parses `text` read from `file_name` (used in messages only). Throws cost::InputError.
Scenario parse_scenario(std::string_view text, const std::string& file_name,
                        const ScenarioLimits& limits = {});
// The same for a document already parsed (a plan's embedded scenario; scenario_file.hpp).
Scenario parse_scenario_document(const nlohmann::json& document, const std::string& file_name,
                                 const ScenarioLimits& limits = {});

// The cross-field rules of a Scenario built or changed in code (for example `parasim compare`
// switching schedules): every violation goes into `diagnostics`, with the JSON path to change.
void check_scenario(const Scenario& scenario, cost::Diagnostics& diagnostics,
                    const ScenarioLimits& limits = {});

// Reads and parses a file. Throws cost::InputError (unreadable file included).
Scenario load_scenario(const std::string& path, const ScenarioLimits& limits = {});

}  // namespace parasim::strat
