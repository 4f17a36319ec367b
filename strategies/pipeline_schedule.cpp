#include "strategies/pipeline_schedule.hpp"

#include <algorithm>

namespace parasim::strat {

std::vector<PipelineItem> pipeline_order(PipelineSchedule schedule, int stage, int stages,
                                         int micro_batches) {
  std::vector<PipelineItem> order;
  order.reserve(static_cast<std::size_t>(2 * micro_batches));
  if (schedule == PipelineSchedule::kGpipe) {
    for (int mb = 0; mb < micro_batches; ++mb) order.push_back({true, mb});
    for (int mb = micro_batches - 1; mb >= 0; --mb) order.push_back({false, mb});
    return order;
  }
  const int warmup = std::min(stages - stage - 1, micro_batches);
  int next_forward = 0;
  int next_backward = 0;
  for (; next_forward < warmup; ++next_forward) order.push_back({true, next_forward});
  while (next_forward < micro_batches) {
    order.push_back({true, next_forward++});
    order.push_back({false, next_backward++});
  }
  while (next_backward < micro_batches) order.push_back({false, next_backward++});
  return order;
}

}  // namespace parasim::strat
