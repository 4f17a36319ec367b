#include "planner/plan_question.hpp"

#include <fmt/format.h>

#include "planner/export/export_context.hpp"
#include "planner/export/target_versions.hpp"
#include "planner/export/trainer_defaults.hpp"
#include "planner/trainer_filter.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {
namespace {

std::optional<exporter::Target> trainer_named(const std::string& name) {
  exporter::Target t{};
  if (!exporter::target_from_name(name, &t) || t == exporter::Target::kShampoo) {
    return std::nullopt;
  }
  return t;
}

constexpr const char* kTrainerNames = "megatron, deepspeed or torchtitan";

}  // namespace

std::optional<exporter::Target> requested_trainer(const std::string& for_option,
                                                  const strat::ScenarioFile& file) {
  // The document's search.trainer is checked even when --for replaces it: a wrong value in the
  // file is still a wrong file.
  std::optional<exporter::Target> from_file;
  const nlohmann::json& doc = file.document;
  if (doc.is_object() && doc.contains("search") && doc["search"].is_object() &&
      doc["search"].contains("trainer")) {
    const nlohmann::json& v = doc["search"]["trainer"];
    if (v.is_string()) from_file = trainer_named(v.get<std::string>());
    if (!from_file) {
      cost::Diagnostics d(file.file);
      d.add(file.path_prefix + "/search/trainer",
            fmt::format("expected {} (the trainer whose runs alone are planned), got {}",
                        kTrainerNames, v.dump()));
      throw cost::InputError(std::move(d));
    }
  }
  if (!for_option.empty()) {
    if (auto t = trainer_named(for_option)) return t;
    cost::Diagnostics d(file.file);
    d.add("--for", fmt::format("expected {}, got \"{}\"", kTrainerNames, for_option));
    throw cost::InputError(std::move(d));
  }
  return from_file;
}

PlanQuestion plan_question(const strat::ScenarioFile& file,
                           std::optional<exporter::Target> trainer,
                           const strat::ScenarioLimits& limits) {
  PlanQuestion q;
  q.trainer = trainer;
  if (!trainer) {
    q.base = file.scenario;
    q.document = file.document;
    return q;
  }
  q.trainer_label = exporter::resolve_version(*trainer, "", false).label;
  q.document = exporter::with_trainer_defaults(file.document, *trainer, &q.defaults);
  try {
    q.base = strat::parse_scenario_document(q.document, file.file, limits);
  } catch (const cost::InputError& e) {
    if (file.path_prefix.empty()) throw;
    throw strat::under_prefix(e, file.path_prefix);
  }
  q.base.layout_given = file.scenario.layout_given;
  return q;
}

void refuse_fixed(const PlanQuestion& q, const SearchSpace& space,
                  const strat::ScenarioFile& file) {
  if (!q.trainer) return;
  const std::vector<exporter::Difference> fixed = fixed_refusals(q.base, space, *q.trainer);
  if (fixed.empty()) return;
  cost::Diagnostics d(file.file);
  for (const exporter::Difference& diff : fixed) {
    d.add(file.path_prefix + diff.path,
          fmt::format("{} is not expressible in {} whatever the layout (plan --for {}); "
                      "supported by: {}",
                      diff.feature, q.trainer_label, exporter::target_name(*q.trainer),
                      diff.supported_by));
  }
  throw cost::InputError(std::move(d));
}

}  // namespace parasim::plan
