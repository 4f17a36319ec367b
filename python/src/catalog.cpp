// What can be chosen (the presets and the registry, as `parasim list --json` prints them), the
// version, and validate: the checks `parasim validate` runs.
#include <fmt/format.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "cli/input_file.hpp"
#include "cli/runs/list_json.hpp"
#include "cli/runs/plan_run.hpp"
#include "costmodel/json_fields.hpp"
#include "costmodel/units.hpp"
#include "python/src/bindings.hpp"
#include "strategies/input/workload_estimate.hpp"

namespace nb = nanobind;

namespace parasim::python {
namespace {

// Throws cost::InputError with every problem; returns the estimate of the work as JSON text.
std::string validate(const std::string& name, const std::optional<std::string>& text, bool full,
                     bool layout_optional) {
  nb::gil_scoped_release release;
  const strat::ScenarioLimits limits =
      layout_optional ? cli::plan_scenario_limits() : strat::ScenarioLimits{};
  const strat::Scenario s = read_scenario({name, text}, limits).scenario;
  if (layout_optional && !s.layout_given) return "{}";  // nothing to size before planning
  cost::Diagnostics too_large(name);
  const strat::WorkloadEstimate e = strat::check_workload_limits(s, full, {}, too_large);
  if (!too_large.ok()) throw cost::InputError(std::move(too_large));
  return nlohmann::ordered_json{
      {"ops", e.ops}, {"devices", e.devices}, {"memory_bytes", e.memory_bytes}}
      .dump();
}

// The text of the JSON file at `path`, read and parsed as every input is (a regular file of at
// most 16 MiB, valid JSON); throws cost::InputError naming the file. For Scenario.load.
std::string read_json_file(const std::string& path) {
  nb::gil_scoped_release release;
  cli::check_input_file(path);
  cost::Diagnostics d(path);
  std::optional<std::string> text =
      cost::read_input_file(path, cost::kMaxInputFileBytes, "scenario or plan", d);
  if (text && !cost::parse_json_document(*text, d)) text.reset();
  if (!text) throw cost::InputError(std::move(d));
  return std::move(*text);
}

}  // namespace

void bind_catalog(nb::module_& m) {
  m.attr("version") = PARASIM_VERSION;
  m.def(
      "presets_json", [] { return cli::presets_json().dump(); },
      "The model and cluster presets as JSON text (parasim list presets --json).");
  m.def(
      "registry_json", [] { return cli::registry_json().dump(); },
      "Every registry entry as JSON text (parasim list strategies --json).");
  m.def("validate", &validate, nb::arg("name"), nb::arg("text").none(), nb::arg("full") = false,
        nb::arg("layout_optional") = false,
        "Checks a scenario as parasim validate does; raises parasim.errors.ScenarioError.");
  m.def("read_json_file", &read_json_file, nb::arg("path"),
        "The text of a JSON input file, read and checked as the commands read theirs.");
}

}  // namespace parasim::python
