#pragma once
// parasim::strat zero-bubble order search — the automatic scheduling heuristic of Qi et al. 2024
// ("Zero Bubble Pipeline Parallelism", arXiv 2401.10241, sec. 3.1), which turns the stages' F, B
// and W times, the point-to-point time and a memory limit into each stage's order of passes.
// The ZB-1p and ZB-2p schedules are this search with a limit of p x M_B and 2p x M_B.
//
// The heuristic, in words (as the paper describes it and its implementation runs it,
// sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/auto_schedule.py and
// zerobubble/scheduler/zb.py, Graph.manual_order and initial_solution; read, not copied):
//  1. Warm-up. Micro-batch 0's forward runs on every stage. Walking from the last stage back to
//     the first, each stage adds forwards while they fit in memory and while its forwards would
//     not yet have reached the time micro-batch 0's backward can arrive from the next stage
//     (variant A, "allow a bubble before the first B": stop before a forward that would end
//     after that arrival; otherwise stop only once the stage is busy up to it), the arrival
//     moving back one B (plus a transfer) per stage. Each stage keeps strictly fewer extra forwards
//     than the stage before it. Then the warm-up forwards run, and micro-batch 0's backward from
//     the last stage to the first.
//  2. Steady rounds, one per further micro-batch i: every stage that has forwards left runs one,
//     except (variant P, "prioritise B") a stage two or more forwards ahead of the next one that
//     would otherwise delay the next stage's F and B, or whose wait for it stays within the
//     largest bubble any stage has accumulated; a stage runs a forward only if every later stage
//     does. Then micro-batch i's backward runs from the last stage to the first.
//     Before any pass a stage runs pending W passes while memory would overflow, and fills the
//     time it must wait for its input (the previous stage's F, the next stage's B) with pending
//     W passes that fit entirely; a wait shorter than one W is filled too when it exceeds the
//     stage's bubble allowance (the largest bubble of any stage less its own) or, in variant G,
//     always. Stage 0 runs all its pending W passes before each backward once its forwards are
//     done.
//  3. The remaining W passes close every stage.
// All eight combinations of A, P and G are tried; the one with the smallest longest stage time
// (first forward's start to last W's end on a stage, the larger over stages) wins, ties to the
// earlier in the order (A, P, G) = (on, on, on), (on, on, off), ..., (off, off, off).
// Differences from the implementation: a combination that cannot keep its memory within the limit
// is skipped (the implementation raises); a stage's warm-up never runs more forwards than the
// stage before it (the implementation's exception for a stage that would run all its forwards in
// the warm-up can run forwards whose input does not exist yet, an invalid order its own checks
// reject); times are integer picoseconds.
//
// Memory: each pass adds its bytes (forward positive; backward and W negative; per stage the
// three sum to zero); at every point of a stage's order the running sum stays within
// memory_limit, except that micro-batch 0's forward and backward are placed unconditionally.

#include <optional>
#include <vector>

#include "sim/time.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {

struct ZeroBubbleInput {
  std::vector<sim::Time> forward, backward, weight_grad;  // per stage: one micro-batch's pass
  sim::Time comm;                                         // one transfer between stages
  std::vector<double> forward_bytes, backward_bytes, weight_grad_bytes;  // per stage, see above
  double memory_limit = 0;                                               // bytes, every stage
  int micro_batches = 1;
};

struct ZeroBubbleOrder {
  std::vector<std::vector<PipelineItem>> stages;  // per stage: F, B, W items in run order
  // The search's own timeline (no contention; transfers take `comm`): per stage the end of each
  // pass in `stages` order, and the objective (the longest stage time).
  std::vector<std::vector<sim::Time>> ends;
  sim::Time longest_stage;
  std::vector<double> peak_bytes;  // per stage: the largest running sum of pass bytes
  bool allow_bubble_before_first_backward = true;  // variant A
  bool prioritise_backward = true;                 // variant P
  bool fill_small_gaps = true;                     // variant G
};

// The best order of the eight variants, or nullopt when none keeps within the memory limit.
// Throws std::invalid_argument on inconsistent input (sizes differ, no stage, m < 1).
std::optional<ZeroBubbleOrder> search_zero_bubble_order(const ZeroBubbleInput& input);

// One variant, for tests; nullopt when it cannot keep within the memory limit.
std::optional<ZeroBubbleOrder> zero_bubble_order(const ZeroBubbleInput& input,
                                                 bool allow_bubble_before_first_backward,
                                                 bool prioritise_backward, bool fill_small_gaps);

}  // namespace parasim::strat
