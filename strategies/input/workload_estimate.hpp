#pragma once
// parasim::strat workload estimate and limits — the work a simulation would take, computed from
// the scenario alone (no cost model, nothing built), and the limits past which parasim refuses
// it: a message that names the estimate, the limit and the option that raises it, in well under
// a second, instead of minutes of work or gigabytes of memory (issue 13, item 5).
//
// What is estimated (docs/scenario.md, Limits):
//   ops             simulated ops (compute blocks and members of collectives and transfers),
//                   counted per pipeline item from the layer programs' step counts: exact for
//                   the pipeline, an upper bound for data-parallel buckets (tested: never below
//                   the built workload's op count and within 10 % of it for every shipped
//                   scenario, symmetric and --full).
//   shampoo_blocks  blocks the Shampoo/DASH step cost walks one by one (optimizer_shampoo.hpp),
//                   over all stages, in closed form (0 for AdamW).
//   memory_bytes    memory of building and simulating the workload, beyond the process's own:
//                   kBytesPerOp x ops + kBytesPerDevice x simulated devices + kBytesPerBlock x
//                   the largest stage's blocks (costed one stage at a time), with coefficients
//                   measured on this code (workload_estimate.cpp says how).

#include <cstddef>
#include <string>

#include "costmodel/diagnostics.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::strat {

struct WorkloadEstimate {
  double devices = 0;         // simulated GPUs
  double ops = 0;             // simulated ops
  double shampoo_blocks = 0;  // over all stages
  double largest_stage_blocks = 0;
  double memory_bytes = 0;
};

// Defaults: every shipped scenario and the benchmark (GPT-3 175B on 1024 GPUs, 5.0 million ops
// and 0.63 GB in --full mode) fit with room to spare; past them a run takes tens of seconds and
// gigabytes (measured figures in workload_estimate.cpp and docs/scenario.md, Limits).
struct WorkloadLimits {
  double max_ops = 10e6;             // --max-ops
  double max_shampoo_blocks = 1e6;   // --max-shampoo-blocks
  double max_memory_bytes = 4.0 * (1ull << 30);  // --max-memory, 4 GiB
};

// `full`: every GPU simulated (simulate --full) instead of one replica and TP rank per stage.
WorkloadEstimate estimate_workload(const Scenario& scenario, bool full);

// The estimate; adds one problem per limit it exceeds: "/" for ops and memory, "/optimizer/
// block_size" for Shampoo blocks; each names the estimate, the limit, the option that raises it
// and what in the scenario to change.
WorkloadEstimate check_workload_limits(const Scenario& scenario, bool full, const WorkloadLimits& limits,
                           cost::Diagnostics& diagnostics);

// "4310", "16.8 million": counts for messages; "1 simulated GPU", "1024 simulated GPUs".
std::string format_count(double n);
std::string format_gpus(double n);

}  // namespace parasim::strat
