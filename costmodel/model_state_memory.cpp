#include "costmodel/model_state_memory.hpp"

#include <stdexcept>

namespace parasim::cost {

ModelStateBytes model_state_bytes(double parameters, int dp, int zero_stage, bool mixed_precision,
                                  bool fp32_gradients) {
  if (!(parameters >= 0) || dp < 1 || zero_stage < 0 || zero_stage > 3) {
    throw std::invalid_argument(
        "model state: parameters must be >= 0, dp >= 1 and the ZeRO stage 0..3");
  }
  // Bytes per parameter (ZeRO paper section 3.1): mixed precision 2 + 2 + 12, fp32 4 + 4 + 8.
  const double weight_bytes = mixed_precision ? 2 : 4;
  const double grad_bytes = mixed_precision && !fp32_gradients ? 2 : 4;
  const double optimizer_bytes = mixed_precision ? 12 : 8;
  const double nd = dp;
  ModelStateBytes m{
      {parameters * weight_bytes}, {parameters * grad_bytes}, {parameters * optimizer_bytes}};
  if (zero_stage >= 1) m.optimizer = m.optimizer / nd;
  if (zero_stage >= 2) m.gradients = m.gradients / nd;
  if (zero_stage >= 3) m.weights = m.weights / nd;
  return m;
}

}  // namespace parasim::cost
