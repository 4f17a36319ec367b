#include "planner/trainer_filter.hpp"

#include <algorithm>
#include <string_view>

#include "planner/export/exporter.hpp"
#include "planner/export/trainer_defaults.hpp"
#include "planner/rules.hpp"
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

// The candidate with the fields no export's acceptance depends on cleared (trainer_filter.hpp).
Candidate filter_key(Candidate c) {
  c.gpus = 0;
  c.micro_batch = 0;
  c.dp = c.dp * c.cp > 1 ? 2 : 1;
  return c;
}

bool TrainerFilter::accepts(const Candidate& c) {
  const Candidate key = filter_key(c);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const bool ok = export_differences(apply_candidate(base_, c), trainer_).empty();
  cache_.emplace(key, ok);
  return ok;
}

std::vector<exporter::Difference> fixed_refusals(const strat::Scenario& base,
                                                 const SearchSpace& space,
                                                 exporter::Target trainer) {
  std::vector<exporter::Difference> fixed;
  for (exporter::Difference& d : export_differences(base, trainer)) {
    if (!layout_path(d.path)) fixed.push_back(std::move(d));
  }
  if (fixed.empty() || space.size() == 0) return fixed;
  // Probes: from each of up to 256 evenly spaced indices, the first candidate that passes the
  // rules (at most 4096 looked at from each).
  constexpr std::uint64_t kProbes = 256, kLookahead = 4096;
  const SpaceFacts facts = space_facts(space);
  const std::uint64_t total = space.size();
  const std::uint64_t stride = std::max<std::uint64_t>(1, total / kProbes);
  std::unordered_map<Candidate, bool, CandidateHash> seen;
  for (std::uint64_t start = 0; start < total && !fixed.empty(); start += stride) {
    for (std::uint64_t i = start; i < std::min(total, start + kLookahead); ++i) {
      const Candidate found = space.decode(i);
      if (check_reason(base, found, facts) != Reason::kOk) continue;
      // The precision is the fastest axis: each probe tries every recipe of the space.
      for (cost::QuantRecipe recipe : space.recipes) {
        Candidate c = found;
        c.recipe = recipe;
        if (check_reason(base, c, facts) != Reason::kOk) continue;
        if (!seen.emplace(filter_key(c), true).second) continue;
        const auto probe = export_differences(apply_candidate(base, c), trainer);
        std::erase_if(fixed, [&](const exporter::Difference& d) {
          return std::none_of(probe.begin(), probe.end(),
                              [&](const exporter::Difference& p) { return p.path == d.path; });
        });
      }
      break;
    }
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
