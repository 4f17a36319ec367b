// The asynchronous schedules: PipeDream (Narayanan et al. 2019, arXiv 1806.03377), PipeDream-2BW
// (Narayanan et al. 2021, arXiv 2006.09503) and PACI (arXiv 2606.07881). They differ in how many
// backwards each stage-local optimizer step follows (backwards_per_update) and in weight
// stashing (the builder and the step report), not in the order.
#include "strategies/schedules/schedule_orders.hpp"

namespace parasim::strat::schedules {

// Backward (and the optimizer steps after every `per_update` of them) first, forwards gated at
// P - s in flight.
void asynchronous_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*,
                        StagePlan& plan) {
  const int per_update = backwards_per_update(sh);
  const int total = sh.micro_batches * sh.steps;
  int step = 0;
  for (int mb = 0; mb < total; ++mb) {
    plan.items.push_back(backward(mb, 0, 0));
    if ((mb + 1) % per_update == 0) plan.items.push_back({ItemKind::kOptimizer, -1, 0, 0, ++step});
    plan.items.push_back(forward(mb, 0, 1));
  }
  plan.gate_in_flight = sh.stages - stage;
  plan.gate_release = ItemKind::kBackward;
}

}  // namespace parasim::strat::schedules
