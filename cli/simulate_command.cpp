#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_file.hpp"
#include "cli/profile_notes.hpp"
#include "cli/runs/simulation_run.hpp"
#include "cli/trace_options.hpp"
#include "costmodel/profile.hpp"
#include "costmodel/profile_fit.hpp"
#include "costmodel/units.hpp"
#include "strategies/input/scenario_file.hpp"
#include "report/report_format.hpp"
#include "report/step_report.hpp"
#include "sim/engine.hpp"
#include "sim/trace.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::cli {
namespace {

struct TraceRequest {
  std::vector<RankRange> ranks;
  std::optional<std::pair<sim::Time, sim::Time>> window;
};

// --trace-ranks and --trace-window, checked before the work.
TraceRequest parse_trace_request(const SimulateOptions& o) {
  TraceRequest request;
  if (o.trace.empty() && (!o.trace_ranks.empty() || !o.trace_window.empty())) {
    throw CommandLineError("--trace-ranks and --trace-window choose what --trace FILE writes; "
                           "give --trace FILE too");
  }
  if (!o.trace_ranks.empty()) request.ranks = parse_rank_list(o.trace_ranks);
  if (!o.trace_window.empty()) request.window = parse_time_window(o.trace_window);
  return request;
}

// The trace text, announced on `err` first when it is large.
std::string make_trace(const SimulateOptions& o, const TraceRequest& request,
                       const strat::BuiltWorkload& built, int total_gpus,
                       const sim::SimResult& result, std::ostream& err) {
  std::vector<std::string> notes;
  sim::TraceFilter filter = make_trace_filter(built, total_gpus, request.ranks, &notes);
  if (request.window) {
    if (request.window->first > result.makespan) {
      throw CommandLineError(fmt::format(
          "--trace-window \"{}\" starts after the simulated run ends ({})", o.trace_window,
          cost::format_time(result.makespan)));
    }
    filter.start = request.window->first;
    filter.end = request.window->second;
  }
  for (const auto& n : notes) err << n << "\n";
  const std::string notice =
      trace_size_notice(sim::chrome_trace_size(built.workload, result, filter), o.trace);
  if (!notice.empty()) err << notice << std::endl;  // before the seconds of writing
  return sim::chrome_trace(built.workload, result, filter);
}

}  // namespace

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
    check_outputs_not_inputs({&json_file, &trace_file},
                             {{o.scenario, "scenario"}, {o.profile, "profile"}});
    const TraceRequest trace_request = parse_trace_request(o);
    check_input_file(o.scenario);
    if (!o.profile.empty()) check_input_file(o.profile);
    const strat::Scenario scenario = strat::load_scenario_file(o.scenario).scenario;
    cost::Profile profile;
    if (!o.profile.empty()) profile = cost::load_profile(o.profile);
    if (!o.profile.empty()) {
      cost::check_profile_fits(profile, scenario.cluster, o.allow_foreign_profile);
    }
    for (const auto& w : profile_warnings(profile, o.profile)) err << "warning: " << w << "\n";
    SimulationSettings settings;
    settings.full = o.full;
    settings.limits = o.limits;
    settings.record_memory_timeline = !o.trace.empty();
    const SimulationRun run =
        run_simulation(scenario, o.profile.empty() ? nullptr : &profile, settings);
    const strat::BuiltWorkload& built = run.built;
    const sim::SimResult& result = run.result;
    const strat::StepReport& report = run.report;

    // Everything is computed; stage the outputs, then put them in place together.
    if (!o.json.empty()) json_file.stage(result_json_text(scenario, report));
    std::size_t trace_bytes = 0;
    if (!o.trace.empty()) {
      std::string trace = make_trace(o, trace_request, built, scenario.cluster.total_gpus(),
                                     result, err);
      trace_bytes = trace.size();
      trace_file.stage(std::move(trace));
    }
    const std::string report_text = format_text_report(scenario, report);
    commit_outputs({&trace_file, &json_file}, out);
    std::ostream& text = json_file.is_stdout() || trace_file.is_stdout() ? err : out;
    text << report_text;
    if (!o.profile.empty()) text << "cost model: profile " << cost::printable(o.profile) << "\n";
    for (const std::string& w : run.warnings) err << "warning: " << w << "\n";
    if (!o.trace.empty()) {
      text << fmt::format("trace: {}, {} (open in https://ui.perfetto.dev)\n", o.trace,
                          cost::format_bytes_si(cost::Bytes{static_cast<double>(trace_bytes)}));
    }
    return kExitOk;
  } catch (const OutputError& e) {
    err << e.what() << "\n";
    return e.exit_code();
  } catch (const CommandLineError& e) {
    err << "parasim simulate: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const sim::TimeRangeError& e) {
    err << cost::printable(o.scenario) << ": " << e.what() << kTimeRangeHint << "\n";
    return kExitBadInput;
  } catch (const sim::WorkloadError& e) {
    err << cost::printable(o.scenario)
        << ": internal error, the generated workload cannot run: " << e.what()
        << "\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    err << cost::printable(o.scenario) << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

int run_validate(const std::string& path, std::ostream& out, std::ostream& err,
                 const strat::WorkloadLimits& limits, bool full) {
  try {
    check_input_file(path);
    const strat::Scenario s = strat::load_scenario_file(path).scenario;
    cost::Diagnostics too_large(path);
    const auto e = strat::check_workload_limits(s, full, limits, too_large);
    if (!too_large.ok()) throw cost::InputError(std::move(too_large));
    out << fmt::format("{}: valid ({}, {} on {} x {} GPUs, dp {} tp {} pp {}, {} micro-batches)\n",
                       cost::printable(path), cost::printable(s.name),
                       cost::printable(s.model.name), s.cluster.nodes, s.cluster.gpus_per_node,
                       s.parallel.dp, s.parallel.tp, s.parallel.pp, s.micro_batches());
    out << fmt::format("  simulating it{}: about {} ops on {}, {} of memory\n",
                       full ? " with --full" : "", strat::format_count(e.ops),
                       strat::format_gpus(e.devices),
                       cost::format_bytes(cost::Bytes{e.memory_bytes}));
    return kExitOk;
  } catch (const cost::InputError& e) {
    err << e.what();
    return kExitBadInput;
  } catch (const sim::TimeRangeError& e) {
    err << cost::printable(path) << ": " << e.what() << kTimeRangeHint << "\n";
    return kExitBadInput;
  }
}

}  // namespace parasim::cli
