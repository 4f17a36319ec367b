#include "strategies/input/scenario_file.hpp"

#include <optional>

#include "costmodel/json_fields.hpp"

namespace parasim::strat {
namespace {

using nlohmann::json;

}  // namespace

cost::InputError under_prefix(const cost::InputError& e, const std::string& prefix) {
  cost::Diagnostics moved(e.diagnostics().file());
  for (const cost::Problem& p : e.diagnostics().problems()) {
    const bool pointer = p.json_path.empty() || p.json_path.front() == '/';
    moved.add(pointer ? prefix + p.json_path : p.json_path, p.message);
  }
  return cost::InputError(std::move(moved));
}

ScenarioFile parse_scenario_file(std::string_view text, const std::string& file_name,
                                 const ScenarioLimits& limits) {
  cost::Diagnostics d(file_name);
  if (text.size() > limits.max_file_bytes) {
    d.add("", cost::file_too_large_message(text.size(), limits.max_file_bytes, "scenario"));
    throw cost::InputError(std::move(d));
  }
  std::optional<json> document = cost::parse_json_document(text, d);
  if (!document) throw cost::InputError(std::move(d));
  ScenarioFile out;
  out.file = file_name;
  if (!document->is_object() || !document->contains("parasim_plan")) {
    out.scenario = parse_scenario_document(*document, file_name, limits);
    out.document = std::move(*document);
    return out;
  }
  const json& version = (*document)["parasim_plan"];
  if (!version.is_number_integer() || version.get<long long>() != kPlanFormatVersion) {
    d.add("/parasim_plan",
          "expected the plan format version 1 (this parasim reads plans of version 1), got " +
              version.dump());
  }
  const auto scenario = document->find("scenario");
  if (scenario == document->end()) {
    d.add("/scenario", "required field is missing: a plan holds the full scenario it plans");
  } else if (!scenario->is_object()) {
    d.add("/scenario",
          "expected an object (a full scenario), got " + cost::json_type_name(*scenario));
  }
  if (!d.ok()) throw cost::InputError(std::move(d));
  try {
    out.scenario = parse_scenario_document(*scenario, file_name, limits);
  } catch (const cost::InputError& e) {
    throw under_prefix(e, "/scenario");
  }
  out.document = std::move(*scenario);
  out.path_prefix = "/scenario";
  out.is_plan = true;
  return out;
}

ScenarioFile load_scenario_file(const std::string& path, const ScenarioLimits& limits) {
  cost::Diagnostics d(path);
  const std::optional<std::string> text =
      cost::read_input_file(path, limits.max_file_bytes, "scenario or plan", d);
  if (!text) throw cost::InputError(std::move(d));
  return parse_scenario_file(*text, path, limits);
}

}  // namespace parasim::strat
