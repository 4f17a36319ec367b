// ZB-H1 and ZB-H2, the Zero Bubble paper's handcrafted schedules (Qi et al. 2024, arXiv
// 2401.10241, sec. 3).
#include <algorithm>
#include <vector>

#include "strategies/schedules/schedule_orders.hpp"

namespace parasim::strat::schedules {
namespace {

// 1F1B's order of F and B, with stage s deferring up to s weight-gradient passes W (so the
// backward chain at the end of the step runs at t_B per stage, the deferred W filling what would
// be the cool-down bubble) and W run as soon as the deferral allows. ZB-H2 also runs P-1-s extra
// warm-up forwards, filling the warm-up bubble at the price of up to 2P-1 micro-batches in flight.
void zero_bubble(const ScheduleShape& sh, int stage, StagePlan& plan, bool h2) {
  const int p = sh.stages, m = sh.micro_batches;
  const int warmup = std::min(m, (h2 ? 2 : 1) * (p - 1 - stage));
  const int defer = (h2 ? 2 : 1) * stage;
  std::vector<int> pending;  // micro-batches whose W has not run
  std::size_t next_w = 0;
  auto run_w = [&](std::size_t keep) {
    while (pending.size() - next_w > keep) {
      plan.items.push_back({ItemKind::kWeightGrad, pending[next_w++], 0, 0, 0});
    }
  };
  int f = 0, b = 0;
  for (; f < warmup; ++f) plan.items.push_back(forward(f));
  while (f < m) {
    plan.items.push_back(forward(f++));
    plan.items.push_back(backward(b));
    pending.push_back(b++);
    run_w(static_cast<std::size_t>(defer));
  }
  while (b < m) {
    plan.items.push_back(backward(b));
    pending.push_back(b++);
    run_w(pending.size() - next_w > 1 ? pending.size() - next_w - 1 : 0);
  }
  run_w(0);
}

}  // namespace

void zb_h1_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*, StagePlan& plan) {
  zero_bubble(sh, stage, plan, false);
}

void zb_h2_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*, StagePlan& plan) {
  zero_bubble(sh, stage, plan, true);
}

}  // namespace parasim::strat::schedules
