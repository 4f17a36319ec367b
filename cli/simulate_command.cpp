#include <fmt/format.h>

#include <sstream>

#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "cli/profile_notes.hpp"
#include "cli/report_format.hpp"
#include "costmodel/profile.hpp"
#include "sim/engine.hpp"
#include "sim/trace.hpp"
#include "strategies/scenario_parser.hpp"
#include "strategies/step_report.hpp"
#include "strategies/workload_builder.hpp"

namespace parasim::cli {

int run_simulate(const SimulateOptions& o, std::ostream& out, std::ostream& err) {
  try {
    // A wrong output path fails before the work, not after it.
    OutputFile json_file(o.json);
    OutputFile trace_file(o.trace);
    if (json_file.is_stdout() && trace_file.is_stdout()) {
      throw OutputError("--json and --trace would both write to standard output", kExitBadInput);
    }
    json_file.check_target();
    trace_file.check_target();
    check_input_file(o.scenario);
    if (!o.profile.empty()) check_input_file(o.profile);
    const strat::Scenario scenario = strat::load_scenario(o.scenario);
    cost::Profile profile;
    if (!o.profile.empty()) profile = cost::load_profile(o.profile);
    for (const auto& w : profile_warnings(profile, o.profile)) err << "warning: " << w << "\n";
    const cost::CostModel costs =
        cost::make_cost_model(scenario.cluster, o.profile.empty() ? nullptr : &profile);
    strat::BuildOptions build_options;
    build_options.full = o.full;
    strat::BuiltWorkload built;
    try {
      built = strat::build_workload(scenario, costs, build_options);
    } catch (const std::length_error& e) {
      err << o.scenario << ": " << e.what() << "\n";
      return kExitBadInput;
    }
    sim::EngineOptions engine_options;
    engine_options.record_memory_timeline = !o.trace.empty();
    const sim::SimResult result = sim::Engine(built.workload, engine_options).run();
    const strat::StepReport report = strat::make_step_report(scenario, built, result);

    // Everything is computed; stage the outputs, then put them in place together.
    if (!o.json.empty()) json_file.stage(report_to_json(scenario, report).dump(2) + "\n");
    if (!o.trace.empty()) {
      std::ostringstream trace;
      sim::write_chrome_trace(trace, built.workload, result);
      trace_file.stage(std::move(trace).str());
    }
    const std::string report_text = format_text_report(scenario, report);
    commit_outputs({&trace_file, &json_file}, out);
    std::ostream& text = json_file.is_stdout() || trace_file.is_stdout() ? err : out;
    text << report_text;
    if (!o.profile.empty()) text << "cost model: profile " << o.profile << "\n";
    for (const std::string& w : costs.warnings().list()) err << "warning: " << w << "\n";
    if (!o.trace.empty()) text << "trace: " << o.trace << " (open in https://ui.perfetto.dev)\n";
    return kExitOk;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return e.exit_code();
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const sim::TimeRangeError& e) {
    err << o.scenario << ": " << e.what() << kTimeRangeHint << "\n";
    return kExitBadInput;
  } catch (const sim::WorkloadError& e) {
    err << o.scenario << ": internal error, the generated workload cannot run: " << e.what()
        << "\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    err << o.scenario << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

int run_validate(const std::string& path, std::ostream& out, std::ostream& err) {
  try {
    check_input_file(path);
    const strat::Scenario s = strat::load_scenario(path);
    out << fmt::format("{}: valid ({}, {} on {} x {} GPUs, dp {} tp {} pp {}, {} micro-batches)\n",
                       path, s.name, s.model.name, s.cluster.nodes, s.cluster.gpus_per_node,
                       s.parallel.dp, s.parallel.tp, s.parallel.pp, s.micro_batches());
    return kExitOk;
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const sim::TimeRangeError& e) {
    err << path << ": " << e.what() << kTimeRangeHint << "\n";
    return kExitBadInput;
  }
}

}  // namespace parasim::cli
