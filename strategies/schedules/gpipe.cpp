// GPipe (Huang et al. 2019, arXiv 1811.06965): all forwards, then all backwards in reverse.
#include "strategies/schedules/schedule_orders.hpp"

namespace parasim::strat::schedules {

void gpipe_order(const ScheduleShape& sh, int, const ZeroBubbleOrder*, StagePlan& plan) {
  for (int mb = 0; mb < sh.micro_batches; ++mb) plan.items.push_back(forward(mb));
  for (int mb = sh.micro_batches - 1; mb >= 0; --mb) plan.items.push_back(backward(mb));
}

}  // namespace parasim::strat::schedules
