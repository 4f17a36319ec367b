#include "planner/export/export_input.hpp"

#include <nlohmann/json.hpp>
#include <optional>

#include "costmodel/json_fields.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::exporter {
namespace {

using nlohmann::json;

// The problems of the embedded scenario, moved under /scenario.
cost::InputError under_scenario(const cost::InputError& e, const std::string& file) {
  cost::Diagnostics moved(file);
  for (const cost::Problem& p : e.diagnostics().problems()) {
    moved.add("/scenario" + p.json_path, p.message);
  }
  return cost::InputError(std::move(moved));
}

}  // namespace

ExportInput parse_export_input(std::string_view text, const std::string& file_name) {
  cost::Diagnostics d(file_name);
  if (text.size() > cost::kMaxInputFileBytes) {
    d.add("", cost::file_too_large_message(text.size(), cost::kMaxInputFileBytes, "plan"));
    throw cost::InputError(std::move(d));
  }
  const std::optional<json> document = cost::parse_json_document(text, d);
  if (!document) throw cost::InputError(std::move(d));
  ExportInput input;
  input.file = file_name;
  if (!document->is_object() || !document->contains("parasim_plan")) {
    input.scenario = strat::parse_scenario(text, file_name);
    return input;
  }
  const json& version = (*document)["parasim_plan"];
  if (!version.is_number_integer() || version.get<long long>() != kPlanFormatVersion) {
    d.add("/parasim_plan",
          "expected the plan format version 1 (this parasim reads plans of "
          "version 1), got " +
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
    input.scenario = strat::parse_scenario(scenario->dump(), file_name);
  } catch (const cost::InputError& e) {
    throw under_scenario(e, file_name);
  }
  input.path_prefix = "/scenario";
  input.is_plan = true;
  return input;
}

ExportInput load_export_input(const std::string& path) {
  cost::Diagnostics d(path);
  const std::optional<std::string> text =
      cost::read_input_file(path, cost::kMaxInputFileBytes, "plan or scenario", d);
  if (!text) throw cost::InputError(std::move(d));
  return parse_export_input(*text, path);
}

}  // namespace parasim::exporter
