#pragma once
// parasim::calib::trace fit — profiled ranks into a version 2 profile's measured tables
// (costmodel/measured_tables.hpp), and what share of the GPU time that covers.
//
// GEMMs: the kernels of one matrix-multiply op call (aten::mm, addmm, bmm, baddbmm, _scaled_mm,
//   with record_shapes' input dims), summed (a split-K GEMM's reduction kernel belongs to its
//   call), one sample per call; points per (m, n, k, batch, dtype), median / p20 / p80 of the
//   samples (kernels::summarize). Transposes are not in the trace: points are written as
//   (false, false).
// Collectives: NCCL kernels with PyTorch's collective metadata. A kernel runs from its launch on
//   its rank's stream, so its duration holds the wait for the group's later ranks. With several
//   ranks' traces, the n-th call of a process group on each rank is the same collective, and its
//   time is the shortest of their durations (the last rank to arrive waits for no one), as
//   nccl-tests reports one collective's time; with one rank, the durations are an upper bound
//   and a note says so. Series per (kind, placement); points per message size S (nccl-tests
//   convention); the alpha-beta fit of fit.hpp when a series has two sizes or more.
// Norms: each aten::native_layer_norm or aten::_fused_rms_norm call whose launch is exactly one
//   memory-bound kernel, with its input dims and type: a NormPoint (rows, hidden, not fused,
//   moved = input read and output written, 2 x rows x hidden x element bytes, plus the weight
//   (and LayerNorm's bias) read and LayerNorm's fp32 mean and rstd per row written), one sample
//   per call, median / p20 / p80 per (rows, hidden, bytes). The cost model takes its memory
//   efficiency from the largest (measured_scalars.hpp), so a profile from a trace carries the run's
//   own streaming rate.
// Placement: the group's ranks with gpus_per_node (rank / gpus_per_node is its node); without
//   the ranks, a group up to gpus_per_node GPUs is read as one node.

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibrate/trace/gpu_trace.hpp"
#include "costmodel/measured_tables.hpp"

namespace parasim::calib::trace {

struct TraceCoverage {
  int ranks = 0;
  int steps = 0;           // profiled steps per rank (the fewest of the ranks; 0: none)
  double gpu_time_us = 0;  // kernel time in the steps, all ranks
  std::array<double, kKernelClasses> class_time_us{};
  std::array<int, kKernelClasses> class_kernels{};
  double fitted_time_us = 0;  // of it, in kernels that became table points
  int gemm_calls = 0;         // GEMM op calls with shapes (fitted)
  int gemm_kernels_without_shape = 0;
  int norm_calls = 0;        // norm op calls fitted
  int collective_calls = 0;  // collective calls fitted (matched over the ranks)
  int collective_kernels_without_metadata = 0;
  int collective_calls_uneven = 0;  // groups spread unevenly over nodes: not fitted
  std::vector<std::pair<std::string, double>> other_kernels_us;  // "other", largest first (20)
  double launch_median_us = 0;  // host time of a kernel launch call, median (0: none recorded)
  std::vector<std::string> notes;
};

struct TraceFitOptions {
  int gpus_per_node = 0;  // 0: the GPUs the traces saw (deviceProperties), else 8, with a note
};

struct TraceFit {
  cost::MeasuredTables tables;
  TraceCoverage coverage;
  // Per collective series and point (tables.collectives' order): the kernels the point's matched
  // calls stand for, over all the traces (each call counts once per rank of its group that was
  // traced), so that a figure per rank divides by the ranks like the GEMMs' samples.
  std::vector<std::vector<int>> collective_kernels;
};

// Throws std::invalid_argument when the ranks are empty or hold no kernel.
TraceFit fit_traces(const std::vector<RankTrace>& ranks, const TraceFitOptions& options);

// The GEMM shape of a matrix-multiply op from its record_shapes input dims, and its dtype (from
// the input types, else from the name of its first kernel); std::nullopt for another op,
// missing dims or no dtype.
std::optional<cost::GemmShape> gemm_shape_of(const TraceOp& op, std::string_view kernel_name = {});

// The norm a norm op computes and the bytes it moves (see above), its element size from the input
// type; std::nullopt for another op or missing dims or type.
struct TraceNorm {
  std::int64_t rows = 0;
  std::int64_t hidden = 0;
  double moved_bytes = 0;
};
std::optional<TraceNorm> norm_of(const TraceOp& op);

// The placement of a recorded collective's group (see above); std::nullopt for a group whose
// nodes hold different numbers of its ranks (parasim's placements are uniform).
std::optional<cost::GroupPlacement> placement_of(const TraceCollective& c, int gpus_per_node);

}  // namespace parasim::calib::trace
