// The screen's FP8 weights (screen.hpp, Screen::fp8_weights): each layer kind's once-a-step
// casts and elements from the builder's own layer programs, cached by the weights' sharding and
// the recipe (they do not depend on the tokens).
#include "planner/screen.hpp"
#include "strategies/layers/layer_program.hpp"

namespace parasim::plan {

const Screen::Fp8Weights& Screen::fp8_weights(const Candidate& c) {
  const ScreenKey key{{c.gpus, c.tp, c.ep, c.etp, static_cast<int>(c.recipe),
                       static_cast<int>(c.placement), c.dp * c.cp}};
  auto it = fp8_weights_.find(key);
  if (it != fp8_weights_.end()) return it->second;
  strat::Scenario sc = apply_candidate(base_, c);
  sc.training.micro_batch = 1;  // the weights' casts do not depend on the tokens
  const cost::CostModel& costs = costs_.at(c.gpus);
  Fp8Weights f;
  f.layer = strat::transformer_layer_program(sc, costs).fp8_weights;
  if (base_.model.moe.enabled()) {
    f.moe = strat::transformer_layer_program(sc, costs, strat::LayerKind::kMoe).fp8_weights;
  }
  f.head = strat::head_program(sc, costs).fp8_weights;
  return fp8_weights_.emplace(key, f).first->second;
}

}  // namespace parasim::plan
