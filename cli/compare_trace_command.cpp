#include "cli/compare_trace_command.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "calibrate/trace/phase_breakdown.hpp"
#include "calibrate/trace/trace_file.hpp"
#include "calibrate/trace/trace_fit.hpp"
#include "calibrate/trace/trace_pricing.hpp"
#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "cli/profile_notes.hpp"
#include "costmodel/profile.hpp"
#include "costmodel/profile_fit.hpp"
#include "report/step_report.hpp"
#include "report/trace/simulated_phases.hpp"
#include "report/trace/trace_json.hpp"
#include "report/trace/trace_text.hpp"
#include "sim/engine.hpp"
#include "strategies/input/scenario_file.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::cli {

CLI::App* add_compare_trace_command(CLI::App& app, CompareTraceOptions& o) {
  auto* c = app.add_subcommand(
      "compare-trace",
      "A profiled run beside parasim's simulation of it: the run's own kernels priced by the cost "
      "model per kernel class (GEMM, attention, collectives), and the step per phase (forward, "
      "backward, optimizer, exposed communication, idle). Give every rank's trace you have, then "
      "the scenario that describes the run, e.g.\n"
      "  parasim compare-trace rank0.json.gz rank1.json.gz my-run.json\n"
      "Traces: PyTorch profiler (Kineto) JSON, gzip or not, profiled with record_shapes=True for "
      "the GEMM shapes; or Nsight Systems SQLite exports (nsys export --type sqlite). "
      "docs/calibration.md#compare-trace");
  c->add_option("files", o.files, "TRACE... SCENARIO: the traces, then the scenario JSON")
      ->required()
      ->expected(2, 100000);
  c->add_option(
      "--profile", o.profile,
      "Cost-model profile (e.g. one written by calibrate --from-trace from these traces)");
  c->add_flag("--allow-foreign-profile", o.allow_foreign_profile,
              "Use a profile measured on another device model than the scenario's");
  c->add_option("--gpus-per-node", o.gpus_per_node,
                "GPUs per node of the profiled run, to place its process groups (default: the "
                "GPUs the traces saw, else 8)")
      ->check(CLI::Range(1, 1024));
  c->add_option("--json", o.json,
                "Also write the figures as JSON (units in the keys); '-' for standard output, the "
                "tables then go to standard error")
      ->type_name("FILE");
  return c;
}

int run_compare_trace(const CompareTraceOptions& o, std::ostream& out, std::ostream& err) {
  const std::string& scenario_path = o.files.back();
  try {
    OutputFile json_file(o.json);
    json_file.check_target();
    check_input_file(scenario_path);
    if (!o.profile.empty()) check_input_file(o.profile);
    const strat::Scenario scenario = strat::load_scenario_file(scenario_path).scenario;
    cost::Profile profile;
    if (!o.profile.empty()) {
      profile = cost::load_profile(o.profile);
      cost::check_profile_fits(profile, scenario.cluster, o.allow_foreign_profile);
    }
    for (const auto& w : profile_warnings(profile, o.profile)) err << "warning: " << w << "\n";
    std::vector<calib::trace::RankTrace> ranks;
    for (std::size_t i = 0; i + 1 < o.files.size(); ++i) {
      for (auto& r : calib::trace::read_trace_file(o.files[i])) ranks.push_back(std::move(r));
    }
    calib::trace::TraceFitOptions fit_options;
    fit_options.gpus_per_node = o.gpus_per_node;
    const calib::trace::TraceFit fit = calib::trace::fit_traces(ranks, fit_options);
    const cost::CostModel costs =
        cost::make_cost_model(scenario.cluster, o.profile.empty() ? nullptr : &profile);
    const calib::trace::TracePricing pricing = calib::trace::price_traces(ranks, fit, costs);

    const strat::BuiltWorkload built = strat::build_workload(scenario, costs, {});
    const sim::SimResult result = sim::Engine(built.workload).run();
    std::vector<calib::trace::PhaseBreakdown> traced;
    for (const auto& r : ranks) traced.push_back(calib::trace::trace_phases(r));

    const strat::StepReport step = strat::make_step_report(scenario, built, result);
    const calib::trace::PhaseBreakdown run_phases = report::mean_breakdown(traced);
    const calib::trace::PhaseBreakdown sim_phases =
        report::simulated_phases(built, result, 0, step.window_begin_s);
    if (!o.json.empty()) {
      const std::vector<std::string> traces(o.files.begin(), o.files.end() - 1);
      json_file.stage(
          report::trace_comparison_json(traces, scenario_path, fit, pricing, run_phases, sim_phases)
              .dump(2) +
          "\n");
      json_file.commit(out);
    }
    std::ostream& text = json_file.is_stdout() ? err : out;
    text << fmt::format("compare-trace: {} against {} ({} on {})\n\n",
                        ranks.size() == 1 ? std::string("1 profiled rank")
                                          : fmt::format("{} profiled ranks", ranks.size()),
                        cost::printable(scenario_path), scenario.model.name,
                        scenario.cluster.device.name);
    text << report::format_trace_coverage(fit) << "\n";
    text << report::format_trace_pricing(pricing);
    text << report::format_trace_phases(run_phases, sim_phases);
    for (const std::string& w : costs.warnings().list()) err << "warning: " << w << "\n";
    return kExitOk;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return e.exit_code();
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const sim::TimeRangeError& e) {
    err << cost::printable(scenario_path) << ": " << e.what() << kTimeRangeHint << "\n";
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    err << "parasim compare-trace: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "parasim compare-trace: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace parasim::cli
