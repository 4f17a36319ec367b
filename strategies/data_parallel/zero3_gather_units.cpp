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

std::vector<double> zero3_reduce_calls(const ModelSpec& m, int tp, const Zero3Gathering& z3) {
  if (!z3.reduce_per_unit) return {layer_params_per_tp_rank(m, tp)};
  std::vector<double> calls = zero3_gather_units(m, tp, z3);
  const double persistent = zero3_persistent_elements(m, tp, z3);
  if (persistent > 0) calls.push_back(persistent);
  return calls;
}

sim::Time zero3_blocking_fetch_host(const FrameworkSpec& f, int group_ranks) {
  return f.host.sync * 3 + f.host.host_only_op * group_ranks + f.host.collective_call;
}

int zero3_backward_gathers(const Zero3Gathering& z3, bool full_recompute) {
  return z3.regather_for_recompute && full_recompute ? 2 : 1;
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
