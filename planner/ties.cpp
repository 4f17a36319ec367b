#include "planner/ties.hpp"

namespace parasim::plan {

ModelError model_error(const strat::Scenario& base, int gpus) {
  if (gpus > base.cluster.gpus_per_node) {
    return {0.0720, "multi-node", "docs/validation.md: family vtrain-multi-node, MAE 7.20 %"};
  }
  return {0.2383, "one node", "docs/validation.md: family vtrain-single-node, MAE 23.83 %"};
}

int parallel_dimensions(const Candidate& c) {
  return (c.tp > 1 ? 1 : 0) + (c.pp > 1 ? 1 : 0) + (c.cp > 1 ? 1 : 0);
}

bool simpler(const Candidate& a, const Candidate& b) {
  if (parallel_dimensions(a) != parallel_dimensions(b)) {
    return parallel_dimensions(a) < parallel_dimensions(b);
  }
  if ((a.cp > 1) != (b.cp > 1)) return a.cp == 1;
  return a.chunks < b.chunks;
}

Tie tie_with_winner(const std::vector<Candidate>& rows, const std::vector<double>& step_s,
                    double fraction) {
  Tie tie;
  if (fraction <= 0 || rows.size() < 2 || step_s.size() != rows.size()) return tie;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (step_s[i] <= step_s.front() * (1 + fraction)) tie.rows.push_back(static_cast<int>(i));
  }
  if (tie.rows.size() < 2) return {};
  tie.simplest = tie.rows.front();
  for (int i : tie.rows) {
    if (simpler(rows[static_cast<std::size_t>(i)], rows[static_cast<std::size_t>(tie.simplest)])) {
      tie.simplest = i;
    }
  }
  return tie;
}

}  // namespace parasim::plan
