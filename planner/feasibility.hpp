#pragma once
// parasim::plan feasibility — why a search found no plan, in one line: the rules that rejected
// the most candidates, and the nearest GPU counts of the cluster whose space holds a candidate that
// passes every rule (and the trainer's filter under --for); or that the trainer refused every
// candidate that passed the rules; or that none fits in memory.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planner/export/export_types.hpp"
#include "planner/planner.hpp"
#include "planner/search_space.hpp"

namespace parasim::plan {

// GPU counts near `requested` (part of one node, or whole nodes of the cluster, at most its
// size; up to `each_side` counts below and above) whose space passes the rules somewhere: the
// first below and the first above found. A count whose space is too large to scan within
// `scan_limit` candidates counts as not found.
std::vector<int> nearest_valid_gpus(const strat::Scenario& base, const nlohmann::json* search,
                                    const SearchOptions& options, int requested,
                                    std::optional<exporter::Target> trainer, int each_side = 32,
                                    std::uint64_t scan_limit = 2000000);

// "no feasible plan: ..." (one line, no newline) for a result with nothing ranked: over the
// memory limit, refused by `trainer` (plan --for; its label), or no layout of the `gpus` counts
// searched passes the rules, with the three rules that rejected the most candidates.
std::string infeasible_line(const PlanResult& r, const std::vector<int>& gpus,
                            const std::vector<int>& nearest, const std::string& trainer);

}  // namespace parasim::plan
