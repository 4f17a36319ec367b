#pragma once
// parasim's Python extension module, parasim._core: the C++ library behind the python/parasim
// package. It passes JSON text both ways (a scenario's text in, the result JSON out, made by the
// same functions the commands call: cli/runs/), so that the Python API's results are the CLI's
// bytes; python/parasim turns the text into dicts, objects and DataFrames.
//
// Every function releases the GIL while it reads, simulates or plans, and may be called from
// several Python threads at once. A C++ error becomes a Python exception (errors.cpp).

#include <nanobind/nanobind.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "costmodel/profile.hpp"
#include "sim/time.hpp"
#include "strategies/input/scenario_file.hpp"

namespace parasim::python {

// A scenario (or plan) as Python hands it over: `text` when the caller has it in memory (a dict
// dumped to JSON; `name` then stands for the file in messages), else the file at `name`.
struct ScenarioSource {
  std::string name;
  std::optional<std::string> text;
};

// Reads `source` as every command does (cli/input_file.hpp, strat::parse_scenario_file): the
// same checks, the same limits, the same messages. Throws cost::InputError.
strat::ScenarioFile read_scenario(const ScenarioSource& source,
                                  const strat::ScenarioLimits& limits = {});
// The calibrated profile Python named (no name: none, the analytical model), read as the
// commands read it (cost::load_profile / cost::parse_profile) and checked against `cluster`
// (cost::check_profile_fits); its warnings (cli/profile_notes.hpp) are appended to `warnings`.
// Throws cost::InputError.
std::optional<cost::Profile> read_checked_profile(const std::optional<std::string>& name,
                                                  const std::optional<std::string>& text,
                                                  const cost::ClusterSpec& cluster,
                                                  bool allow_foreign_profile,
                                                  std::vector<std::string>& warnings);

// A time beyond the engine's range (sim::TimeRangeError) while working on the input `name`: the
// command prints it as "NAME: what; check the scenario's ..." (exit code 2); errors.cpp raises
// it as a ScenarioError with that message.
struct NamedTimeRangeError : std::range_error {
  NamedTimeRangeError(std::string input, const std::string& what)
      : std::range_error(what), name(std::move(input)) {}
  std::string name;
};

// Runs `work`, turning a sim::TimeRangeError into a NamedTimeRangeError naming `name`.
template <class Work>
auto naming_time_errors(const std::string& name, Work&& work) {
  try {
    return work();
  } catch (const sim::TimeRangeError& e) {
    throw NamedTimeRangeError(name, e.what());
  }
}

void bind_errors(nanobind::module_& m);      // errors.cpp: C++ exceptions -> parasim.errors
void bind_catalog(nanobind::module_& m);     // catalog.cpp: version, presets, registry, validate
void bind_simulation(nanobind::module_& m);  // simulation.cpp: simulate and its result
void bind_compare(nanobind::module_& m);     // compare.cpp
void bind_plan(nanobind::module_& m);        // plan.cpp: plan with progress, export
void bind_bench(nanobind::module_& m);       // bench.cpp: the command timed in-process

}  // namespace parasim::python
