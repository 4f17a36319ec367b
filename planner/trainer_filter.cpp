#include "planner/trainer_filter.hpp"

#include <string_view>

#include "planner/export/exporter.hpp"
#include "planner/export/trainer_defaults.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {
namespace {

// A path the planner's space sets (or whose export follows the layout): differences there may go
// with another candidate.
bool layout_path(std::string_view path) {
  for (std::string_view prefix :
       {"/parallel/", "/training/micro_batch", "/training/recompute", "/training/attention",
        "/optimizer/stacking", "/optimizer/block_size", "/training/framework/gradient_"}) {
    if (path.substr(0, prefix.size()) == prefix) return true;
  }
  return false;
}

}  // namespace

std::vector<exporter::Difference> export_differences(const strat::Scenario& scenario,
                                                     exporter::Target trainer) {
  exporter::ExportInput input;
  input.scenario = scenario;
  input.file = scenario.source_file;
  exporter::ExportOptions options;
  options.target = trainer;
  options.allow_approximate = true;  // every difference listed, none thrown
  return exporter::export_scenario(input, options).differences;
}

bool TrainerFilter::accepts(const Candidate& c) {
  const ScreenKey key{{c.tp, c.pp, c.cp, c.dp * c.cp > 1 ? 1 : 0, c.sequence_parallel ? 1 : 0,
                       c.chunks, static_cast<std::int64_t>(c.schedule),
                       static_cast<std::int64_t>(c.recompute), c.zero_stage,
                       static_cast<std::int64_t>(c.attention),
                       static_cast<std::int64_t>(c.placement),
                       static_cast<std::int64_t>(c.optimizer) * 64 +
                           static_cast<std::int64_t>(c.stacking)}};
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const bool ok = export_differences(apply_candidate(base_, c), trainer_).empty();
  cache_.emplace(key, ok);
  return ok;
}

std::vector<exporter::Difference> fixed_refusals(const strat::Scenario& base,
                                                 exporter::Target trainer) {
  std::vector<exporter::Difference> fixed;
  for (exporter::Difference& d : export_differences(base, trainer)) {
    if (!layout_path(d.path)) fixed.push_back(std::move(d));
  }
  return fixed;
}

std::vector<exporter::Target> trainers_running(const nlohmann::json& document,
                                               const std::string& file) {
  std::vector<exporter::Target> out;
  for (exporter::Target t : kTrainers) {
    try {
      const strat::Scenario s = strat::parse_scenario_document(
          exporter::with_trainer_defaults(document, t, nullptr), file);
      if (export_differences(s, t).empty()) out.push_back(t);
    } catch (const cost::InputError&) {
      // the trainer's defaults make the layout invalid: it does not run it
    }
  }
  return out;
}

}  // namespace parasim::plan
