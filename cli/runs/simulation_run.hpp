#pragma once
// parasim::cli simulation run — one training step of a scenario, simulated in memory: what
// `parasim simulate` writes and what the Python API's simulate() returns (python/), computed by
// this one function so that both give the same bytes.

#include <string>
#include <vector>

#include "costmodel/profile.hpp"
#include "report/step_report.hpp"
#include "sim/engine.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/input/workload_estimate.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::cli {

struct SimulationSettings {
  bool full = false;                    // every GPU, not one replica per stage
  strat::WorkloadLimits limits;         // refused before anything is built when exceeded
  bool record_memory_timeline = false;  // for a trace's or a picture's memory counters
};

struct SimulationRun {
  strat::BuiltWorkload built;
  sim::SimResult result;
  strat::StepReport report;
  std::vector<std::string> warnings;  // the cost model's, in the order found
};

// Simulates `scenario` with `profile`'s measured figures (nullptr: the analytical model from the
// scenario's hardware), which the caller has checked with cost::check_profile_fits. Throws
// cost::InputError (a workload over `settings.limits`), sim::TimeRangeError (hardware figures that
// put a time beyond the engine's range) and sim::WorkloadError (a broken invariant).
SimulationRun run_simulation(const strat::Scenario& scenario, const cost::Profile* profile,
                             const SimulationSettings& settings);

// The same with a cost model made once for several scenarios on one cluster (compare_run.hpp);
// the run's warnings are then the caller's to read from `costs`.
SimulationRun run_simulation(const strat::Scenario& scenario, const cost::CostModel& costs,
                             const SimulationSettings& settings);

// The result JSON as `simulate --json` writes it: indented by 2, one newline at the end.
std::string result_json_text(const strat::Scenario& scenario, const strat::StepReport& report);

}  // namespace parasim::cli
