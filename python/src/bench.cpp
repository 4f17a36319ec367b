// The command's own simulate, in-process and timed, for benchmarks/python_overhead.py: what
// `parasim simulate SCENARIO --json OUT` does (read, simulate, report, write the file), without
// starting a process; and the same steps without the file (read, simulate, the result JSON and
// the text report), which is what parasim.simulate asks of the C++ side. The Python API's
// per-call overhead is measured against both.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "cli/commands.hpp"
#include "cli/runs/simulation_run.hpp"
#include "python/src/bindings.hpp"
#include "report/report_format.hpp"

namespace nb = nanobind;

namespace parasim::python {
namespace {

// Seconds of each of `repeats` calls of cli::run_simulate(scenario, --json json_out).
std::vector<double> time_cli_simulate(const std::string& scenario, const std::string& json_out,
                                      int repeats) {
  nb::gil_scoped_release release;
  cli::SimulateOptions o;
  o.scenario = scenario;
  o.json = json_out;
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) {
    std::ostringstream out, err;
    const auto start = std::chrono::steady_clock::now();
    const int code = cli::run_simulate(o, out, err);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (code != cli::kExitOk) throw std::runtime_error(err.str());
  }
  return seconds;
}

// Seconds of each of `repeats` runs of what simulate does in C++ for a path: read the scenario,
// simulate it, make the result JSON text and the text report.
std::vector<double> time_core_simulate(const std::string& scenario, int repeats) {
  nb::gil_scoped_release release;
  std::vector<double> seconds;
  std::size_t bytes = 0;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const strat::Scenario s = read_scenario({scenario, std::nullopt}).scenario;
    const cli::SimulationRun run = cli::run_simulation(s, nullptr, {});
    bytes +=
        cli::result_json_text(s, run.report).size() + cli::format_text_report(s, run.report).size();
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  if (bytes == 0) throw std::runtime_error("nothing was made");
  return seconds;
}

}  // namespace

void bind_bench(nb::module_& m) {
  m.def("time_cli_simulate", &time_cli_simulate, nb::arg("scenario"), nb::arg("json_out"),
        nb::arg("repeats"),
        "Seconds of each in-process run of `parasim simulate SCENARIO --json JSON_OUT`.");
  m.def("time_core_simulate", &time_core_simulate, nb::arg("scenario"), nb::arg("repeats"),
        "Seconds of each run of simulate's C++ steps for a path (no file written).");
}

}  // namespace parasim::python
