#pragma once
// parasim::plan question — what `parasim plan` is asked: the scenario, and, with `--for TRAINER`
// (or the scenario's `search.trainer`), the trainer whose runs alone may be planned. For a
// trainer the scenario takes that trainer's defaults where it does not choose
// (planner/export/trainer_defaults.hpp: its framework preset, its gradient precision), so the
// plan is simulated as the trainer runs it, and what no layout can change (the model, the
// optimizer, the precision) is checked once the search space is known (refuse_fixed).

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "planner/export/export_types.hpp"
#include "planner/search_space.hpp"
#include "strategies/input/scenario_file.hpp"

namespace parasim::plan {

struct PlanQuestion {
  strat::Scenario base;                     // with the trainer's defaults
  nlohmann::json document;                  // the scenario document plans are written from
  std::optional<exporter::Target> trainer;  // empty: every trainer's layouts
  std::string trainer_label;                // "megatron-core 0.19.2"
  std::vector<std::string> defaults;        // the defaults applied, one line each
};

// The trainer `for_option` names ("megatron", "deepspeed", "torchtitan"; empty: none), else the
// document's search.trainer. Throws cost::InputError naming --for or /search/trainer (under the
// file's path prefix) for another value.
std::optional<exporter::Target> requested_trainer(const std::string& for_option,
                                                  const strat::ScenarioFile& file);

// The question for `file` and `trainer`. Throws cost::InputError when the scenario with the
// trainer's defaults is invalid.
PlanQuestion plan_question(const strat::ScenarioFile& file,
                           std::optional<exporter::Target> trainer,
                           const strat::ScenarioLimits& limits);

// Throws cost::InputError when the question's trainer cannot run the scenario whatever layout of
// `space` is chosen (trainer_filter.hpp, fixed_refusals): every such setting named with its JSON
// path, "not expressible in TRAINER whatever the layout". Nothing without a trainer.
void refuse_fixed(const PlanQuestion& q, const SearchSpace& space, const strat::ScenarioFile& file);

}  // namespace parasim::plan
