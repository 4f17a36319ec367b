#include "strategies/data_parallel/zero3_gather_units.hpp"

#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {

std::vector<double> zero3_gather_units(const ModelSpec& m, int tp, const Zero3Gathering& z3) {
  if (z3.unit == Zero3Gather::kPerLayer) return {layer_params_per_tp_rank(m, tp)};
  std::vector<double> units;
  for (const auto& module : layer_module_tensors_per_tp_rank(m, tp)) {
    double gathered = 0;  // its tensors above the persistence threshold
    for (double elements : module) {
      if (elements > z3.persistence_threshold) gathered += elements;
    }
    if (gathered > 0) units.push_back(gathered);
  }
  return units;
}

double zero3_partition_h2d_bytes(double elements, int dp, double param_bytes) {
  return elements / dp * param_bytes;
}

double zero3_persistent_elements(const ModelSpec& m, int tp, const Zero3Gathering& z3) {
  if (z3.unit == Zero3Gather::kPerLayer) return 0;
  double persistent = 0;
  for (const auto& module : layer_module_tensors_per_tp_rank(m, tp)) {
    for (double elements : module) {
      if (elements <= z3.persistence_threshold) persistent += elements;
    }
  }
  return persistent;
}

}  // namespace parasim::strat
