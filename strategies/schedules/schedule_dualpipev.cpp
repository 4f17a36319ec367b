// DualPipeV: DeepSeek's DualPipe in its V form (DeepSeek-V3 technical report, arXiv 2412.19437
// sec. 3.2.1; deepseek-ai/DualPipe @3da1bbea, dualpipe/dualpipev.py), as PyTorch's
// ScheduleDualPipeV and torchtitan's DualPipeV run it.
#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "strategies/schedules/order_time.hpp"
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// Rank r of P holds chunk 0 (virtual stage r) and chunk 1 (virtual stage 2P - 1 - r); N = m
// micro-batches, N >= 2P (dualpipev.py, step_1 .. step_8, L330-396):
//   1: 2(P - r - 1) x F0          2: r + 1 x (F0, F1)
//   3: P - r - 1 x (B1 split, W, F1)
//   4: N - 2P + r + 1 x (F0 with B1, F1 with B0)
//   5: P - r - 1 x (B1, F1 with B0)
//   6: r + 1 x (B1, B0), split from the middle on (i = (r + 1) / 2; an odd rank splits that
//      iteration's B1 too)
//   7: P - r - 1 x (W, B0 split)  8: r + 1 x W
// A full backward is B followed by its W; a split one leaves its W in a first-in first-out
// queue that each "W" runs from. "F with B" is one of DualPipe's overlapped pairs: parasim runs
// the pair's forward in queue 1 (ScheduleShape::overlap_pairs), so that the compute stream runs
// it while the backward waits on a collective, as DeepSeek's overlapped_forward_backward hides
// one micro-batch's all-to-all under the other's compute; without overlap the forward, then the
// backward (PyTorch's OVERLAP_F_B without a custom function; torchtitan's preset).
void dualpipev_stage_order(const ScheduleShape& sh, int rank, const ZeroBubbleOrder*,
                           StagePlan& plan) {
  const int p = sh.stages, n = sh.micro_batches, r = rank;
  int f[2] = {0, 0}, b[2] = {0, 0}, w[2] = {0, 0};
  std::deque<int> queued;  // chunks of the split backwards whose W waits
  auto add = [&](ItemKind k, int chunk, int mb) { plan.items.push_back({k, mb, chunk, 0, 0}); };
  auto forward = [&](int c) { add(ItemKind::kForward, c, f[c]++); };
  // The forward of an overlapped pair: queue 1 (pipeline_schedule.hpp), or in sequence.
  auto paired_forward = [&](int c) {
    plan.items.push_back(
        {ItemKind::kForward, f[c]++, c, static_cast<std::uint8_t>(sh.overlap_pairs ? 1 : 0), 0});
  };
  auto weight = [&]() {
    if (queued.empty()) return;
    const int c = queued.front();
    queued.pop_front();
    add(ItemKind::kWeightGrad, c, w[c]++);
  };
  auto backward = [&](int c, bool split) {
    add(ItemKind::kBackward, c, b[c]++);
    queued.push_back(c);
    if (!split) weight();  // a full backward: its W at once (the queue holds only its own then)
  };
  for (int i = 0; i < 2 * (p - r - 1); ++i) forward(0);
  for (int i = 0; i < r + 1; ++i) {
    forward(0);
    forward(1);
  }
  for (int i = 0; i < p - r - 1; ++i) {
    backward(1, true);
    weight();
    forward(1);
  }
  for (int i = 0; i < n - 2 * p + r + 1; ++i) {
    if (i == 0 && r == p - 1) {
      forward(0);  // the last rank's first pair runs in sequence (dualpipev.py L355-362)
    } else {
      paired_forward(0);
    }
    backward(1, false);
    paired_forward(1);
    backward(0, false);
  }
  for (int i = 0; i < p - r - 1; ++i) {
    backward(1, false);
    paired_forward(1);
    backward(0, false);
  }
  bool split = false;
  for (int i = 0; i < r + 1; ++i) {
    if (i == (r + 1) / 2 && r % 2 == 1) split = true;
    backward(1, split);
    if (i == (r + 1) / 2 && r % 2 == 0) split = true;
    backward(0, split);
  }
  for (int i = 0; i < p - r - 1; ++i) {
    weight();
    backward(0, true);
  }
  while (!queued.empty()) weight();
}

double dualpipev_pipeline_time(const StagePassTimes& t) {
  return order_pipeline_time(PipelineSchedule::kDualPipeV, t);
}

void enough_micro_batches(const Scenario& s, cost::Diagnostics& d) {
  const auto m = whole_micro_batches(s);
  if (!m || *m >= 2LL * s.parallel.pp) return;
  d.add("/training/global_batch",
        fmt::format("dualpipev needs at least 2 x pp = {} micro-batches per step (DualPipe's "
                    "dualpipev.py and PyTorch's ScheduleDualPipeV refuse fewer); this batch "
                    "gives {}",
                    2 * s.parallel.pp, *m));
}

void overlap_needs_dualpipev(const Scenario& s, cost::Diagnostics& d) {
  if (!s.parallel.overlap_forward_backward) return;
  d.add("/parallel/overlap_forward_backward",
        fmt::format("overlap_forward_backward applies to \"schedule\": \"dualpipev\" only, not {}",
                    schedule_name(s.parallel.schedule)));
}

}  // namespace

Entry dualpipev_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "dualpipev";
  e.description =
      "DeepSeek's DualPipe in its V: two chunks per stage (stage s holds virtual stages s and "
      "2P-1-s), a forward of one micro-batch paired with a backward of another in the steady "
      "phase, backwards split into B and W at the ends; bubble (P-1)(F&B + B - 3W) with PP = 2P "
      "chunks, 2P+1 chunk activation sets per stage (DualPipe README); needs m >= 2P";
  e.paper =
      "DeepSeek-AI 2024, DeepSeek-V3, arXiv 2412.19437 sec. 3.2.1; deepseek-ai/DualPipe "
      "dualpipev.py; PyTorch ScheduleDualPipeV (torchtitan DualPipeV)";
  ParameterSpec overlap;
  overlap.path = "/parallel/overlap_forward_backward";
  overlap.default_value = "the framework's: true (DeepSeek's DualPipe); false with torchtitan";
  overlap.range_text = "true or false";
  overlap.meaning =
      "each steady-phase pair's forward and backward overlapped, one's collectives (the "
      "experts' all-to-all, TP's) under the other's compute; false: one after the other";
  overlap.when_not_taken = overlap_needs_dualpipev;
  e.parameters = {chunks_parameter(),
                  post_validation_parameter("false", "iterations overlap (see zb-1p)"), overlap};
  e.rules = v_shape_rules();
  e.rules.push_back(enough_micro_batches);
  e.builder = "schedule_dualpipev.cpp: dualpipev_stage_order";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kDualPipeV,
                            .order = dualpipev_stage_order,
                            .splits_weight_gradient = true,
                            .pipeline_time = dualpipev_pipeline_time,
                            .activation_sets = stages_on_every_stage};
  return e;
}

}  // namespace parasim::strat
