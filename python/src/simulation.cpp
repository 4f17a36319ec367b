// simulate: one step of a scenario (cli/runs/simulation_run.hpp), kept as a Simulation whose
// JSON and text are what `parasim simulate --json` and its report print, and whose timeline,
// memory picture and Chrome trace are drawn when asked for.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "cli/runs/simulation_run.hpp"
#include "python/src/bindings.hpp"
#include "report/compare/compare_pictures.hpp"
#include "report/report_format.hpp"
#include "sim/trace.hpp"

namespace nb = nanobind;

namespace parasim::python {
namespace {

struct Simulation {
  // The scenario (as its own variant), its workload, result and report; without the workload
  // and result when the caller did not keep them (keep_workload).
  cli::CompareRow row;
  bool has_workload = false;
  bool memory_timeline = false;
  std::string json;                   // simulate --json
  std::string text;                   // simulate's report
  std::vector<std::string> warnings;  // the profile's, then the cost model's (the CLI's order)
};

std::unique_ptr<Simulation> simulate(const std::string& name,
                                     const std::optional<std::string>& text,
                                     const std::optional<std::string>& profile_name,
                                     const std::optional<std::string>& profile_text,
                                     bool allow_foreign_profile, bool full, bool memory_timeline,
                                     bool keep_workload) {
  nb::gil_scoped_release release;
  return naming_time_errors(name, [&] {
    auto out = std::make_unique<Simulation>();
    strat::Scenario scenario = read_scenario({name, text}).scenario;
    const std::optional<cost::Profile> profile = read_checked_profile(
        profile_name, profile_text, scenario.cluster, allow_foreign_profile, out->warnings);
    cli::SimulationSettings settings;
    settings.full = full;
    settings.record_memory_timeline = memory_timeline;
    cli::SimulationRun run = cli::run_simulation(scenario, profile ? &*profile : nullptr, settings);
    out->json = cli::result_json_text(scenario, run.report);
    out->text = cli::format_text_report(scenario, run.report);
    out->warnings.insert(out->warnings.end(), run.warnings.begin(), run.warnings.end());
    out->memory_timeline = memory_timeline;
    out->has_workload = keep_workload;
    out->row.variant.label = scenario.name;
    out->row.variant.axis = "scenario";
    out->row.variant.scenario = std::move(scenario);
    if (keep_workload) {
      out->row.built = std::move(run.built);
      out->row.result = std::move(run.result);
    }
    out->row.report = std::move(run.report);
    return out;
  });
}

void require_workload(const Simulation& s, const char* what) {
  if (!s.has_workload) {
    throw std::invalid_argument(std::string(what) +
                                " is drawn from the simulated workload, which this result did not "
                                "keep: simulate(..., keep_workload=True)");
  }
}

std::string timeline_svg(const Simulation& s) {
  require_workload(s, "the timeline");
  nb::gil_scoped_release release;
  return cli::compare_timeline_svg(s.row, s.row.result.makespan.to_seconds());
}

std::string memory_svg(const Simulation& s) {
  require_workload(s, "the memory picture");
  if (!s.memory_timeline) {
    throw std::invalid_argument(
        "the memory picture needs the memory timeline: simulate(..., memory_timeline=True)");
  }
  nb::gil_scoped_release release;
  return cli::compare_memory_svg(s.row, s.row.result.makespan.to_seconds());
}

std::string chrome_trace(const Simulation& s) {
  require_workload(s, "the trace");
  nb::gil_scoped_release release;
  return sim::chrome_trace(s.row.built.workload, s.row.result, {});
}

}  // namespace

void bind_simulation(nb::module_& m) {
  nb::class_<Simulation>(m, "Simulation", "One simulated step (use parasim.simulate).")
      .def_ro("json", &Simulation::json, "The result JSON, as parasim simulate --json writes it.")
      .def_ro("text", &Simulation::text, "The text report, as parasim simulate prints it.")
      .def_ro("warnings", &Simulation::warnings, "The profile's and the cost model's warnings.")
      .def_ro("has_workload", &Simulation::has_workload,
              "Whether the workload was kept (the pictures and the trace need it).")
      .def_ro("memory_timeline", &Simulation::memory_timeline,
              "Whether memory was recorded over time (memory_svg, the trace's counters).")
      .def("timeline_svg", &timeline_svg, "Per stage: its pipeline items and its communication.")
      .def("memory_svg", &memory_svg, "Memory in use per stage against time.")
      .def("chrome_trace", &chrome_trace, "The Chrome trace JSON (https://ui.perfetto.dev).");
  m.def("simulate", &simulate, nb::arg("name"), nb::arg("text").none(),
        nb::arg("profile_name").none(), nb::arg("profile_text").none(),
        nb::arg("allow_foreign_profile"), nb::arg("full"), nb::arg("memory_timeline"),
        nb::arg("keep_workload"),
        "Simulates one step; raises parasim.errors.ScenarioError on bad input.");
}

}  // namespace parasim::python
