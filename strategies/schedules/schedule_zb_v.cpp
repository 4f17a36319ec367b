// ZB-V: the Zero Bubble paper's V-shaped schedule (Qi et al. 2024, arXiv 2401.10241 v2, sec. 6),
// in the order PyTorch's ScheduleZBVZeroBubble runs it (torchtitan's ZBVZeroBubble).
#include <algorithm>
#include <vector>

#include "strategies/schedules/order_time.hpp"
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// Rank r of P holds chunk 0 (virtual stage r) and chunk 1 (virtual stage 2P - 1 - r). PyTorch
// (torch/distributed/pipelining/schedules.py @d0f2af8b, ScheduleZBVZeroBubble.
// _calculate_single_rank_operations) builds the order for n = max(2P - 1, m) micro-batches and
// blanks those beyond m:
//   2(P - r) - 1 forwards of chunk 0; r pairs (F chunk 1, F chunk 0); P - r triples
//   (F, B, W of chunk 1); then, while chunk 1 has forwards left: F chunk 0 (while any), B and W
//   of chunk 0, F, B and W of chunk 1; cool-down: r pairs (B chunk 0, B chunk 1), P - r pairs
//   (B chunk 0, W chunk 0), then the deferred W of chunk 1, then of chunk 0.
void zb_v_stage_order(const ScheduleShape& sh, int rank, const ZeroBubbleOrder*, StagePlan& plan) {
  const int p = sh.stages, m = sh.micro_batches, n = std::max(2 * p - 1, m);
  int f0 = 0, f1 = 0, b0 = 0, b1 = 0;
  std::vector<PipelineItem> items;
  auto add = [&](ItemKind k, int chunk, int mb) { items.push_back({k, mb, chunk, 0, 0}); };
  for (int i = 0; i < 2 * (p - rank) - 1; ++i) add(ItemKind::kForward, 0, f0++);
  for (int i = 0; i < rank; ++i) {
    add(ItemKind::kForward, 1, f1++);
    add(ItemKind::kForward, 0, f0++);
  }
  for (int i = 0; i < p - rank; ++i) {
    add(ItemKind::kForward, 1, f1++);
    add(ItemKind::kBackward, 1, b1);
    add(ItemKind::kWeightGrad, 1, b1++);
  }
  while (f1 < f0 || f0 < n) {
    if (f0 < n) add(ItemKind::kForward, 0, f0++);
    add(ItemKind::kBackward, 0, b0);
    add(ItemKind::kWeightGrad, 0, b0++);
    add(ItemKind::kForward, 1, f1++);
    add(ItemKind::kBackward, 1, b1);
    add(ItemKind::kWeightGrad, 1, b1++);
  }
  int w0 = b0, w1 = b1;
  for (int i = 0; i < rank; ++i) {
    add(ItemKind::kBackward, 0, b0++);
    add(ItemKind::kBackward, 1, b1++);
  }
  for (int i = 0; i < p - rank; ++i) {
    add(ItemKind::kBackward, 0, b0++);
    add(ItemKind::kWeightGrad, 0, w0++);
  }
  while (w1 < b1) add(ItemKind::kWeightGrad, 1, w1++);
  while (w0 < b0) add(ItemKind::kWeightGrad, 0, w0++);
  for (const PipelineItem& item : items) {
    if (item.micro_batch < m) plan.items.push_back(item);
  }
}

double zb_v_pipeline_time(const StagePassTimes& t) {
  return order_pipeline_time(PipelineSchedule::kZbV, t);
}

}  // namespace

Entry zb_v_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "zb-v";
  e.description =
      "zero bubble in a V: two chunks per stage, the second coming back up the stages (stage s "
      "holds virtual stages s and 2P-1-s, the loss on stage 0), backward split into B and W; "
      "no bubble when tF = tB = tW, 1F1B's peak activations (P micro-batches) on every stage, "
      "twice the point-to-point traffic";
  e.paper =
      "Qi et al. 2024, arXiv 2401.10241 v2 sec. 6; order: PyTorch ScheduleZBVZeroBubble "
      "(torchtitan ZBVZeroBubble)";
  e.parameters = {chunks_parameter(),
                  post_validation_parameter("false", "iterations overlap (see zb-1p)")};
  e.rules = v_shape_rules();
  e.builder = "schedule_zb_v.cpp: zb_v_stage_order";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kZbV,
                            .order = zb_v_stage_order,
                            .splits_weight_gradient = true,
                            .pipeline_time = zb_v_pipeline_time,
                            .activation_sets = stages_on_every_stage};
  return e;
}

}  // namespace parasim::strat
