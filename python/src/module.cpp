#include "cli/input_file.hpp"
#include "cli/profile_notes.hpp"
#include "costmodel/profile_fit.hpp"
#include "python/src/bindings.hpp"

namespace parasim::python {

strat::ScenarioFile read_scenario(const ScenarioSource& source,
                                  const strat::ScenarioLimits& limits) {
  if (source.text) return strat::parse_scenario_file(*source.text, source.name, limits);
  cli::check_input_file(source.name);
  return strat::load_scenario_file(source.name, limits);
}

std::optional<cost::Profile> read_checked_profile(const std::optional<std::string>& name,
                                                  const std::optional<std::string>& text,
                                                  const cost::ClusterSpec& cluster,
                                                  bool allow_foreign_profile,
                                                  std::vector<std::string>& warnings) {
  if (!name) return std::nullopt;
  if (!text) cli::check_input_file(*name);
  cost::Profile profile = text ? cost::parse_profile(*text, *name) : cost::load_profile(*name);
  cost::check_profile_fits(profile, cluster, allow_foreign_profile);
  for (std::string& w : cli::profile_warnings(profile, *name)) warnings.push_back(std::move(w));
  return profile;
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
