#include "planner/feasibility.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "planner/rules.hpp"
#include "planner/trainer_filter.hpp"

namespace parasim::plan {
namespace {

// A reason that no candidate of the same layout can avoid (with one chunk and micro-batch 1, the
// most permissive values, the batch and the stage split fail only for the layout's own degrees).
bool layout_reason(Reason r) {
  switch (r) {
    case Reason::kHeads:
    case Reason::kLayers:
    case Reason::kHidden:
    case Reason::kTpNodes:
    case Reason::kUnevenGroups:
    case Reason::kBatch:
      return true;
    default:
      return false;
  }
}

// Whether some candidate of the space for `gpus` passes the rules (and the trainer).
bool has_valid(const strat::Scenario& base, const nlohmann::json* search, SearchOptions options,
               int gpus, std::optional<exporter::Target> trainer, std::uint64_t scan_limit) {
  options.gpus = gpus;
  SearchSpace space;
  try {
    space = make_search_space(base, search, options, base.source_file);
  } catch (const cost::InputError&) {
    return false;  // no layout of that many GPUs (or a space over the limit)
  }
  const SpaceFacts facts = space_facts(space);
  std::optional<TrainerFilter> filter;
  if (trainer) filter.emplace(base, *trainer);
  // The layout is the slowest axis: each layout's candidates are one block of indices. A layout
  // that one permissive candidate (one chunk, micro-batch 1, nothing else switched on) already
  // breaks on a rule of the layout alone is skipped whole.
  const std::uint64_t per_layout = space.size() / space.layouts.size();
  std::uint64_t scanned = 0;
  for (std::uint64_t l = 0; l < space.layouts.size() && scanned < scan_limit; ++l) {
    Candidate probe = space.decode(l * per_layout);
    probe.chunks = 1;
    probe.micro_batch = 1;
    probe.sequence_parallel = false;
    probe.schedule = facts.first_schedule;
    probe.placement = strat::TpPlacement::kMegatron;
    probe.first_stage_layers = probe.last_stage_layers = 0;
    const Reason why = check_reason(base, probe, facts);
    // No balanced split of the layers may still leave a searched edge split.
    if (layout_reason(why) && why != Reason::kLayers) continue;
    for (std::uint64_t i = l * per_layout; i < (l + 1) * per_layout && scanned < scan_limit;
         ++i, ++scanned) {
      const Candidate c = space.decode(i);
      if (check_reason(base, c, facts) != Reason::kOk) continue;
      if (!filter || filter->accepts(c)) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<int> nearest_valid_gpus(const strat::Scenario& base, const nlohmann::json* search,
                                    const SearchOptions& options, int requested,
                                    std::optional<exporter::Target> trainer, int each_side,
                                    std::uint64_t scan_limit) {
  const int gpn = std::max(1, base.cluster.gpus_per_node);
  const int total = base.cluster.total_gpus();
  // The counts a plan may ask for (cluster_for_gpus): part of one node, or whole nodes.
  auto next = [gpn](int g, int sign) {
    if (sign > 0) return g < gpn ? g + 1 : (g / gpn + 1) * gpn;
    if (g <= gpn) return g - 1;
    return g % gpn == 0 ? g - gpn : (g / gpn) * gpn;
  };
  std::vector<int> out;
  for (int sign : {-1, +1}) {
    int g = next(requested, sign);
    for (int k = 0; k < each_side && g >= 1 && g <= total; ++k, g = next(g, sign)) {
      if (has_valid(base, search, options, g, trainer, scan_limit)) {
        out.push_back(g);
        break;
      }
    }
  }
  return out;
}

std::string infeasible_line(const PlanResult& r, const std::vector<int>& gpus,
                            const std::vector<int>& nearest, const std::string& trainer) {
  auto count = [&r](Reason k) { return r.rejects.counts[static_cast<std::size_t>(k)]; };
  std::string of_gpus;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    of_gpus += (i == 0 ? "" : i + 1 == gpus.size() ? " or " : ", ") + std::to_string(gpus[i]);
  }
  std::string why;
  if (r.feasible > 0 || !r.rejects.closest_memory.empty()) {
    why = r.feasible > 0 && count(Reason::kSimulatedMemory) == 0 && count(Reason::kValidate) > 0
              ? "every candidate the screen let through failed the scenario's own checks"
              : "every layout that passes the rules is over the memory limit";
  } else if (count(Reason::kTrainer) > 0) {
    why = fmt::format(
        "{} candidates of {} GPUs pass the rules, but {} runs none of them as "
        "planned (export one with --allow-approximate to see what it refuses)",
        count(Reason::kTrainer), of_gpus, trainer.empty() ? "the trainer" : trainer);
  } else {
    // The three rules that rejected the most candidates, with their counts.
    std::vector<std::size_t> order;
    for (std::size_t k = 1; k < r.rejects.counts.size(); ++k) {
      const auto reason = static_cast<Reason>(k);
      if (reason == Reason::kDuplicate || reason == Reason::kTrainer) continue;
      if (r.rejects.counts[k] > 0) order.push_back(k);
    }
    std::stable_sort(order.begin(), order.end(), [&r](std::size_t a, std::size_t b) {
      return r.rejects.counts[a] > r.rejects.counts[b];
    });
    std::string most;
    for (std::size_t i = 0; i < std::min<std::size_t>(3, order.size()); ++i) {
      most += fmt::format("{}{} ({})", i == 0 ? "" : "; ",
                          reason_text(static_cast<Reason>(order[i])), r.rejects.counts[order[i]]);
    }
    why = fmt::format("no layout of {} GPUs passes the rules{}", of_gpus,
                      most.empty() ? "" : " (most rejected: " + most + ")");
  }
  std::string where;
  if (!nearest.empty()) {
    where = "; nearest GPU counts with a layout that passes the rules: ";
    for (std::size_t i = 0; i < nearest.size(); ++i) {
      where += (i == 0 ? "" : ", ") + std::to_string(nearest[i]);
    }
    where += " (--gpus)";
  }
  return "no feasible plan: " + why + where;
}

}  // namespace parasim::plan
