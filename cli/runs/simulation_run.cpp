#include "cli/runs/simulation_run.hpp"

#include "report/report_format.hpp"

namespace parasim::cli {

SimulationRun run_simulation(const strat::Scenario& scenario, const cost::CostModel& costs,
                             const SimulationSettings& settings) {
  SimulationRun run;
  run.built = strat::build_workload(scenario, costs, {settings.full, settings.limits});
  sim::EngineOptions engine_options;
  engine_options.record_memory_timeline = settings.record_memory_timeline;
  run.result = sim::Engine(run.built.workload, engine_options).run();
  run.report = strat::make_step_report(scenario, run.built, run.result);
  return run;
}

SimulationRun run_simulation(const strat::Scenario& scenario, const cost::Profile* profile,
                             const SimulationSettings& settings) {
  const cost::CostModel costs = cost::make_cost_model(scenario.cluster, profile);
  SimulationRun run = run_simulation(scenario, costs, settings);
  run.warnings = costs.warnings().list();
  return run;
}

std::string result_json_text(const strat::Scenario& scenario, const strat::StepReport& report) {
  return report_to_json(scenario, report).dump(2) + "\n";
}

}  // namespace parasim::cli
