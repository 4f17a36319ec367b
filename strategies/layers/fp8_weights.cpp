// FP8 weights beyond the layer programs (layer_program.hpp): what they change in memory and in the
// data-parallel all-gathers, for the builder and the planner's screen.
#include <algorithm>

#include "costmodel/precision/quantization.hpp"
#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {

double fp8_weight_memory_bytes(const Scenario& sc, const QuantizedWeightStep& weights) {
  const auto& f = sc.training.fp8;
  if (!f.enabled()) return 0;
  const double elements = weights.elements + weights.expert_elements;
  if (f.param_gather) {  // FP8 parameters in place of the 16-bit ones (torchao: none)
    const double holders = sc.parallel.zero_stage == 3 ? sc.replicas() : 1;
    const auto arch = sc.cluster.device.architecture;
    return elements *
           (cost::fp8_parameter_bytes_per_element(f.recipe, arch) -
            cost::bytes_per_element(sc.training.precision)) /
           holders;
  }
  return elements * cost::cached_weight_bytes_per_element(f.recipe, sc.cluster.device.architecture);
}

double gathered_weight_bytes(const Scenario& sc, bool fp8_linear) {
  if (fp8_linear && sc.training.fp8.enabled() && sc.training.fp8.param_gather) return 1.0;
  return cost::bytes_per_element(sc.training.precision);
}

double gathered_parameter_bytes(const Scenario& sc, double params, double fp8_elements) {
  const double fp8 = std::min(params, fp8_elements);
  return (params - fp8) * gathered_weight_bytes(sc, false) + fp8 * gathered_weight_bytes(sc, true);
}

double zero3_gathered_element_bytes(const Scenario& sc) {
  const double element = cost::bytes_per_element(sc.training.precision);
  if (!sc.training.fp8.enabled() || !sc.training.fp8.param_gather) return element;
  const double matrices = layer_matrix_params_per_tp_rank(sc.model, sc.parallel.tp) /
                          layer_params_per_tp_rank(sc.model, sc.parallel.tp);
  return matrices * gathered_weight_bytes(sc, true) + (1 - matrices) * element;
}

}  // namespace parasim::strat
