// Interleaved zero bubble: interleaved 1F1B with the backward split into B and W, in the order
// PyTorch's ScheduleInterleavedZeroBubble runs it (torchtitan's InterleavedZeroBubble); with
// one layer per chunk, the Zero Bubble paper's interleaved runs (Qi et al. 2024, arXiv
// 2401.10241).
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <string>

#include "strategies/schedules/order_time.hpp"
#include "strategies/schedules/schedule_family.hpp"
#include "strategies/schedules/schedule_list.hpp"

namespace parasim::strat {
namespace {

// PyTorch (torch/distributed/pipelining/schedules.py @d0f2af8b, _get_1f1b_rank_ops and
// ScheduleInterleavedZeroBubble): rounds = max(1, m / P), mpr = m / rounds micro-batches per
// round; rank r runs min((v - 1) mpr + (P - 1 - r), m v) warm-up forwards, then F with B pairs,
// then the remaining B; each B's W is run r steps later (first in, first out), the rest at the
// end. The k-th forward runs chunk (k / mpr) % v, the k-th backward chunk
// v - 1 - (k / mpr) % v; each chunk's micro-batches in order.
void interleaved_zb_stage_order(const ScheduleShape& sh, int rank, const ZeroBubbleOrder*,
                                StagePlan& plan) {
  const int p = sh.stages, v = sh.chunks, m = sh.micro_batches;
  const int rounds = std::max(1, m / p), mpr = m / rounds;
  const int total = m * v;
  const int warmup = std::min((v - 1) * mpr + (p - 1 - rank), total);
  std::vector<int> next_f(static_cast<std::size_t>(v), 0), next_b(static_cast<std::size_t>(v), 0),
      next_w(static_cast<std::size_t>(v), 0);
  std::deque<int> pending_w;  // chunks whose B ran and W has not
  auto forward = [&](int k) {
    const int c = (k / mpr) % v;
    plan.items.push_back({ItemKind::kForward, next_f[static_cast<std::size_t>(c)]++, c, 0, 0});
  };
  auto backward = [&](int k) {
    const int c = v - 1 - (k / mpr) % v;
    plan.items.push_back({ItemKind::kBackward, next_b[static_cast<std::size_t>(c)]++, c, 0, 0});
    pending_w.push_back(c);
  };
  auto weight = [&]() {
    const int c = pending_w.front();
    pending_w.pop_front();
    plan.items.push_back({ItemKind::kWeightGrad, next_w[static_cast<std::size_t>(c)]++, c, 0, 0});
  };
  for (int k = 0; k < warmup; ++k) forward(k);
  for (int k = 0; k < total; ++k) {  // the k-th backward
    if (warmup + k < total) forward(warmup + k);
    backward(k);
    if (k >= rank) weight();
  }
  while (!pending_w.empty()) weight();
}

double interleaved_zb_pipeline_time(const StagePassTimes& t) {
  return order_pipeline_time(PipelineSchedule::kInterleavedZb, t);
}

// PyTorch's rounds: m must split into rounds of m / max(1, m / P) micro-batches.
void rounds_split_micro_batches(const Scenario& s, cost::Diagnostics& d) {
  const auto m = whole_micro_batches(s);
  if (!m) return;
  if (const auto problem = interleaved_zb_batch_problem(s.parallel.pp, *m)) {
    d.add("/training/global_batch", *problem);
  }
}

// torchtitan runs InterleavedZeroBubble with two or more stages a rank (pipeline_parallel.py
// @b5bcd76c); one chunk per stage is zb-h1's layout.
void several_chunks(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.chunks >= 2) return;
  d.add("/parallel/chunks",
        "interleaved-zb runs two or more model chunks per stage (torchtitan's "
        "InterleavedZeroBubble; with one chunk use zb-h1): set chunks");
}

}  // namespace

std::optional<std::string> interleaved_zb_batch_problem(int pp, long long micro_batches) {
  const long long rounds = std::max(1LL, micro_batches / pp);
  if (micro_batches % rounds == 0) return std::nullopt;
  return fmt::format(
      "interleaved-zb runs the micro-batches in rounds of m / max(1, m / pp): {} "
      "micro-batches over pp {} make {} rounds that do not divide them (PyTorch's "
      "ScheduleInterleavedZeroBubble refuses it); use a multiple of pp",
      micro_batches, pp, rounds);
}

Entry interleaved_zb_schedule() {
  Entry e;
  e.kind = EntryKind::kSchedule;
  e.name = e.value = "interleaved-zb";
  e.description =
      "interleaved 1F1B with the backward split into B and W: v chunks per stage in a loop, "
      "(v-1) x mpr + P-1-s warm-up forwards (half interleaved-1f1b's extra), each W r passes "
      "after its B on stage r; chunks as many as the layers give one layer per chunk (the Zero "
      "Bubble paper's interleaved runs)";
  e.paper =
      "Qi et al. 2024, arXiv 2401.10241; order: PyTorch ScheduleInterleavedZeroBubble "
      "(torchtitan InterleavedZeroBubble)";
  e.parameters = {chunks_parameter(),
                  post_validation_parameter("false", "iterations overlap (see zb-1p)")};
  e.rules = {several_chunks, rounds_split_micro_batches};
  e.builder = "schedule_interleaved_zb.cpp: interleaved_zb_stage_order";
  e.traits = ScheduleTraits{.id = PipelineSchedule::kInterleavedZb,
                            .order = interleaved_zb_stage_order,
                            .splits_weight_gradient = true,
                            .pipeline_time = interleaved_zb_pipeline_time,
                            .activation_sets = stages_on_every_stage};
  return e;
}

}  // namespace parasim::strat
