#include "cli/input_file.hpp"
#include "python/src/bindings.hpp"

namespace parasim::python {

strat::ScenarioFile read_scenario(const ScenarioSource& source,
                                  const strat::ScenarioLimits& limits) {
  if (source.text) return strat::parse_scenario_file(*source.text, source.name, limits);
  cli::check_input_file(source.name);
  return strat::load_scenario_file(source.name, limits);
}

cost::Profile read_profile(const ScenarioSource& source) {
  if (source.text) return cost::parse_profile(*source.text, source.name);
  cli::check_input_file(source.name);
  return cost::load_profile(source.name);
}

}  // namespace parasim::python

NB_MODULE(_core, m) {
  m.doc() = "parasim's C++ library (JSON text in and out); use the parasim package instead";
  parasim::python::bind_errors(m);
  parasim::python::bind_catalog(m);
  parasim::python::bind_simulation(m);
  parasim::python::bind_compare(m);
  parasim::python::bind_plan(m);
  parasim::python::bind_bench(m);
}
