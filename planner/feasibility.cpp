#include "planner/feasibility.hpp"

#include <fmt/format.h>

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
    if (layout_reason(check_reason(base, probe, facts))) continue;
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
  const int gpn = base.cluster.gpus_per_node;
  const int total = base.cluster.total_gpus();
  std::vector<int> out;
  // Whole nodes below and above (one node's count when it is below a node).
  const int step = std::max(1, gpn);
  for (int sign : {-1, +1}) {
    int g = requested >= gpn ? (requested / step) * step : requested;
    if (sign > 0 || g == requested) g += sign * step;
    for (int k = 0; k < each_side && g >= 1 && g <= total; ++k, g += sign * step) {
      if (has_valid(base, search, options, g, trainer, scan_limit)) {
        out.push_back(g);
        break;
      }
    }
  }
  return out;
}

std::string infeasible_line(const PlanResult& r, int gpus, const std::vector<int>& nearest) {
  std::size_t top = 0;
  for (std::size_t k = 1; k < r.rejects.counts.size(); ++k) {
    if (static_cast<Reason>(k) == Reason::kDuplicate) continue;  // not a reason against a plan
    if (top == 0 || r.rejects.counts[k] > r.rejects.counts[top]) top = k;
  }
  std::string why;
  if (r.feasible > 0 || !r.rejects.closest_memory.empty()) {
    why = "every layout that passes the rules is over the memory limit";
  } else {
    why = fmt::format("no layout of {} GPUs passes the rules (most rejected: {})", gpus,
                      top == 0 ? "none" : reason_text(static_cast<Reason>(top)));
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
