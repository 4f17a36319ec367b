// Interleaved 1F1B (Narayanan et al. 2021, arXiv 2104.04473, sec 2.2): v model chunks per stage.
#include <algorithm>

#include "strategies/schedules/schedule_orders.hpp"

namespace parasim::strat::schedules {

// Megatron-LM's interleaved schedule (schedules.py, forward_backward_pipelining_with_interleaving):
// the k-th forward runs chunk (k / P) % v of micro-batch (k / (P v)) P + k % P; the k-th backward
// runs the chunks in reverse. Warm-up: (P - s - 1) * 2 + (v - 1) * P forwards.
void interleaved_order(const ScheduleShape& sh, int stage, const ZeroBubbleOrder*,
                       StagePlan& plan) {
  const int p = sh.stages, v = sh.chunks, m = sh.micro_batches;
  const int total = m * v;
  auto mb_of = [&](int k) { return (k / (p * v)) * p + k % p; };
  auto chunk_of = [&](int k, bool fwd) {
    const int c = (k / p) % v;
    return fwd ? c : v - 1 - c;
  };
  const int warmup = std::min((p - stage - 1) * 2 + (v - 1) * p, total);
  int f = 0, b = 0;
  for (; f < warmup; ++f) plan.items.push_back(forward(mb_of(f), chunk_of(f, true)));
  while (f < total) {
    plan.items.push_back(forward(mb_of(f), chunk_of(f, true)));
    ++f;
    plan.items.push_back(backward(mb_of(b), chunk_of(b, false)));
    ++b;
  }
  for (; b < total; ++b) plan.items.push_back(backward(mb_of(b), chunk_of(b, false)));
}

}  // namespace parasim::strat::schedules
