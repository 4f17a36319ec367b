// 1F1B (PipeDream-Flush, Narayanan et al. 2021, arXiv 2104.04473): P-s-1 warm-up forwards, then
// forward/backward pairs, then the remaining backwards.
#include <algorithm>

#include "strategies/schedules/schedule_orders.hpp"

namespace parasim::strat::schedules {

void one_f_one_b_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*,
                       StagePlan& plan) {
  const int m = sh.micro_batches;
  const int warmup = std::min(sh.stages - stage - 1, m);
  int f = 0, b = 0;
  for (; f < warmup; ++f) plan.items.push_back(forward(f));
  while (f < m) {
    plan.items.push_back(forward(f++));
    plan.items.push_back(backward(b++));
  }
  while (b < m) plan.items.push_back(backward(b++));
}

}  // namespace parasim::strat::schedules
