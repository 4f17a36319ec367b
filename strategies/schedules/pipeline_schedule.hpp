#pragma once
// parasim::strat pipeline schedules — what each stage (GPU) runs, in which order or by which
// priority rule, over the micro-batches of one or more optimizer steps.
//
// Items: F (forward), B (backward; with a weight-gradient split, only the input gradient), W
// (weight gradient, zero-bubble schedules only), O (a stage-local optimizer step, asynchronous
// schedules only). Each item sits in a queue of its stage's streams; one queue is a fixed order,
// several a priority rule (sim/workload.hpp). A forward may also be gated: the i-th forward of a
// stage waits until item `gate_release` of the micro-batch `gate_in_flight` places earlier is done,
// which caps the micro-batches in flight. In a flush schedule, a forward in queue 1 is one half of
// an overlapped pair (dualpipev): it may start once the item before it is done, runs beside the
// backward after it, and the item after that backward (and its W) waits for it.
//
// Flush schedules (one optimizer step, synchronous):
//  gpipe   all F, then all B (Huang et al. 2019, arXiv 1811.06965). Bubble (P-1)/(m+P-1).
//  1f1b    P-s-1 warm-up F, then F/B pairs, then the remaining B (PipeDream-Flush, Narayanan et
//          al. 2021, arXiv 2104.04473). Same bubble; stage s holds at most P-s micro-batches.
//  interleaved-1f1b  v model chunks per stage, Megatron's order (Narayanan et al. 2021, sec 2.2):
//          bubble (P-1)/(v m) of the ideal time; needs m to be a multiple of P, or runs
//          micro-batches in groups of N per chunk (ScheduleShape::microbatch_group).
//  zb-h1, zb-h2  backward split into B and W (Qi et al. 2024, arXiv 2401.10241), handcrafted:
//          1F1B's F/B order with stage s deferring up to s (H1) or 2s (H2) W passes, which then
//          fill the cool-down; H2 also runs 2(P-1-s) warm-up forwards. At most P (H1) or 2P-1 (H2)
//          micro-batches in flight on any stage; bubbles (P-1)(tF+tB-tW) and (P-1)(tF+tB-2tW)
//          when tB >= tW (H1) or tB >= 2tW (H2) and m is large enough (tested).
//  zb-1p, zb-2p  the same split, each stage's order searched by the paper's automatic scheduling
//          heuristic (sec. 3.1, zero_bubble_search.hpp) on the stages' simulated F, B, W and
//          transfer times, with an activation memory limit of p x M_B (1p) or 2p x M_B (2p);
//          the builder runs the search and passes the order in.
//  Zero-bubble schedules with optimizer post-validation (sec. 4; on by default for zb-1p and
//  zb-2p): each stage's optimizer step follows its own last pass and the next iteration starts
//  on that stage right after it, the global gradient-norm and NaN/inf checks being validated
//  later instead of synchronising all stages before the step. Simulated as iterations back to
//  back (each ending in a stage-local optimizer item O), the first one excluded as warm-up.
// Asynchronous schedules (no flush; several optimizer steps, each stage steps on its own):
//  pipedream      backward first, forward gated at P-s in flight, O after every B; weight stashing
//                 (Narayanan et al. 2019, PipeDream, arXiv 1806.03377).
//  pipedream-2bw  the same with O after every m backwards; two weight versions, every micro-batch
//  of
//                 a group using the version current when the group's first forward ran (Narayanan
//                 et al. 2021, arXiv 2006.09503).
//  paci           the same with O after every a = m backwards and no stashing: forward and backward
//                 see the current weights (PACI, arXiv 2606.07881; DistPACI/Workers.py).

#include <string_view>
#include <vector>

#include "strategies/input/scenario.hpp"

namespace parasim::strat {

enum class ItemKind : std::uint8_t { kForward, kBackward, kWeightGrad, kOptimizer };

struct PipelineItem {
  ItemKind kind = ItemKind::kForward;
  int micro_batch = 0;  // across all simulated steps; -1 for O
  int chunk = 0;        // model chunk on this stage (interleaved), else 0
  std::uint8_t queue = 0;
  int step = 0;  // for O: the optimizer step it completes (1-based)
};

struct StagePlan {
  std::vector<PipelineItem> items;  // in queue order within each queue
  int gate_in_flight = 0;           // 0: forwards are not gated
  ItemKind gate_release = ItemKind::kBackward;
};

struct ScheduleShape {
  PipelineSchedule schedule = PipelineSchedule::kOneFOneB;
  int stages = 1;            // P
  int micro_batches = 1;     // m per optimizer step (a for PACI)
  int chunks = 1;            // v (interleaved)
  int steps = 1;             // global batches simulated (asynchronous schedules, post-validation)
  int microbatch_group = 0;  // interleaved: micro-batches per chunk in a row; 0: P
  // dualpipev: its forward-backward pairs overlapped (the pair's forward in queue 1, free to run
  // while the backward waits on a collective); false: one after the other.
  bool overlap_pairs = false;
};

struct ZeroBubbleOrder;  // zero_bubble_search.hpp

// What `stage` runs. Searched schedules (zb-1p, zb-2p) take their per-stage order from
// `searched` (required for them, std::invalid_argument without it); a flush schedule with
// shape.steps > 1 (post-validation) repeats its iteration with an optimizer item O after each.
StagePlan stage_plan(const ScheduleShape& shape, int stage,
                     const ZeroBubbleOrder* searched = nullptr);

bool is_asynchronous(PipelineSchedule s);
bool splits_weight_gradient(PipelineSchedule s);
// zb-1p and zb-2p: each stage's order comes from the search (zero_bubble_search.hpp).
bool is_searched(PipelineSchedule s);
// The search's activation memory limit in units of p x M_B: 1 (zb-1p) or 2 (zb-2p); 0 otherwise.
int searched_memory_multiple(PipelineSchedule s);
// ParallelSpec::optimizer_post_validation resolved: as set, else on for zb-1p and zb-2p.
bool post_validation(const ParallelSpec& p);
// Weight versions are stashed so that a micro-batch's backward uses its forward's weights.
bool stashes_weights(PipelineSchedule s);
// Micro-batch backwards per stage-local optimizer step (asynchronous schedules).
int backwards_per_update(const ScheduleShape& shape);

// Optimizer steps simulated for an asynchronous schedule, and how many of them are warm-up.
struct AsyncSteps {
  int total = 1;
  int warmup = 0;
};
AsyncSteps async_steps(PipelineSchedule s, int stages, int micro_batches);
// The optimizer steps a scenario simulates: async_steps for asynchronous schedules; with
// post-validation kPostValidationSteps (the first a warm-up); else one.
AsyncSteps simulated_steps(const ParallelSpec& p, int micro_batches);
inline constexpr AsyncSteps kPostValidationSteps{3, 1};

}  // namespace parasim::strat
