#include "planner/cost_models.hpp"

#include <set>

namespace parasim::plan {

SpaceCostModels make_space_cost_models(const strat::Scenario& base, const SearchSpace& space,
                                       const cost::Profile* profile) {
  std::set<int> gpu_counts{base.cluster.total_gpus()};
  for (const Layout& l : space.layouts) gpu_counts.insert(l.gpus);
  SpaceCostModels out;
  for (int g : gpu_counts) {
    out.owned.push_back(std::make_unique<cost::CostModel>(
        cost::make_cost_model(cluster_for_gpus(base.cluster, g), profile)));
    out.view.by_gpus[g] = out.owned.back().get();
  }
  return out;
}

}  // namespace parasim::plan
