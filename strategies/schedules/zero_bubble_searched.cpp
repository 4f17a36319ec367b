// ZB-1p and ZB-2p (Qi et al. 2024, arXiv 2401.10241, sec. 3.1): each stage's order is what the
// paper's automatic scheduling heuristic found (zero_bubble_search.hpp); the builder runs the
// search and passes the order in.
#include <stdexcept>
#include <string>

#include "strategies/schedules/schedule_orders.hpp"
#include "strategies/schedules/zero_bubble_search.hpp"

namespace parasim::strat::schedules {

void zb_searched_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder* searched,
                       StagePlan& plan) {
  if (searched == nullptr || stage >= static_cast<int>(searched->stages.size())) {
    throw std::invalid_argument(std::string(schedule_name(sh.schedule)) +
                                ": the searched order of every stage is required");
  }
  plan.items = searched->stages[static_cast<std::size_t>(stage)];
}

}  // namespace parasim::strat::schedules
