#pragma once
// parasim::cli plan run — the steps of `parasim plan` between reading the inputs and writing the
// outputs: the question and its search space, the cost models, the planner's options, and the
// texts made of its result (the ranked table, the candidates JSON, the plan file). The command
// (cli/plan_command.cpp, which adds MPI and files) and the Python API's plan() (python/) both
// call these, so that both give the same bytes.

#include <string>

#include "cli/plan_command.hpp"
#include "costmodel/profile.hpp"
#include "planner/cost_models.hpp"
#include "planner/plan_question.hpp"
#include "planner/planner.hpp"
#include "planner/search_space.hpp"
#include "strategies/input/scenario_file.hpp"

namespace parasim::cli {

struct PlanSetup {
  plan::PlanQuestion question;  // the base scenario with the trainer's defaults
  plan::SearchOptions search;   // from the options (--allow-async, --gpus, --search, --for)
  plan::SearchSpace space;
  plan::SpaceCostModels costs;  // filled by add_plan_costs
};

// How a scenario to plan is read: its "parallel" section may be left out (the planner chooses,
// and there is no "yours" row).
strat::ScenarioLimits plan_scenario_limits();

// The question, the search options and the space of `file` (a scenario or a plan read with
// ScenarioLimits::layout_optional) under `options`. Throws cost::InputError (every problem: a bad
// search section, a trainer that cannot run the scenario whatever the layout).
PlanSetup prepare_plan(const strat::ScenarioFile& file, const PlanCommandOptions& options);

// The cost model of every GPU count in the space; `profile` (nullptr: the analytical model) has
// been checked against the cluster (cost::check_profile_fits).
void add_plan_costs(PlanSetup& setup, const cost::Profile* profile);

// The planner's options from `options`: threads (0: every core, shared among `ranks_here`
// processes of this node for the screen), what to keep, the trainer; no progress callback.
plan::PlanOptions plan_options(const PlanSetup& setup, const PlanCommandOptions& options,
                               int ranks_here);

// The ranked table as `plan` prints it (with the tier timings under options.timings).
std::string plan_text(const PlanSetup& setup, const strat::ScenarioFile& file,
                      const plan::PlanResult& result, const PlanCommandOptions& options);
// `plan --json`: the screened candidates kept and the simulated ones (indented by 2, newline).
std::string plan_candidates_text(const PlanSetup& setup, const plan::PlanResult& result);
// `plan --out`: the plan file (result.ranked > 0); `device` and provenance from `options`.
std::string plan_file_text(const PlanSetup& setup, const plan::PlanResult& result,
                           const PlanCommandOptions& options);
// Why no candidate was ranked (result.ranked == 0), with the nearest GPU counts that would work.
std::string no_plan_line(const PlanSetup& setup, const plan::PlanResult& result);

}  // namespace parasim::cli
