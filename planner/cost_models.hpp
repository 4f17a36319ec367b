#pragma once
// parasim::plan cost models of a space — one cost model per GPU count the space holds (and the
// scenario's own), each for the cluster cut to that many GPUs (candidate.hpp, cluster_for_gpus),
// all from the same profile. The planner, its benchmark and its tests build them here.

#include <memory>
#include <vector>

#include "costmodel/cost_model.hpp"
#include "costmodel/profile.hpp"
#include "planner/screen.hpp"
#include "planner/search_space.hpp"

namespace parasim::plan {

struct SpaceCostModels {
  std::vector<std::unique_ptr<cost::CostModel>> owned;
  CostModels view;  // points into `owned`
};

// `profile` may be null (the analytical model).
SpaceCostModels make_space_cost_models(const strat::Scenario& base, const SearchSpace& space,
                                       const cost::Profile* profile);

}  // namespace parasim::plan
