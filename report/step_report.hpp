#pragma once
// parasim::strat::StepReport — the figures of one simulated training step, derived from the
// engine's SimResult and the workload's metadata. Units are in the field names.
//
// Definitions
// - bubble_fraction[stage]: 1 - (time the stage spends inside pipeline items: forward, backward,
//   weight-gradient passes and stage-local optimizer steps) / (the window). Flush schedules: the
//   window runs from the step's start to the end of the last backward pass on any stage; with
//   equal stage times and free communication this is (P-1)/(m+P-1) for GPipe and 1F1B.
//   Runs over several steps (asynchronous schedules; zero-bubble schedules with optimizer
//   post-validation, whose iterations overlap): the window is the steady state, from the end of
//   stage 0's last gradient pass (backward; W when split) of the warm-up steps to the end of its
//   last one.
// - step_time_s: one simulated step, its makespan; several, the steady-state time per global
//   batch over that window. Per-step bytes and exposed times of runs over several steps are the
//   run's totals divided by the steps simulated.
// - exposed_comm_s[kind]: per GPU (mean over simulated devices), time a collective or transfer of
//   that kind is running while the device's compute stream is idle. A group counts from the
//   moment all its members have arrived, not while one waits for the others.
// - comm_bytes[kind]: bytes sent by all GPUs of the cluster in one step.
// - link_bytes_*: bytes sent over intra-node links (NVLink) and NICs by all GPUs in one step.
// - mfu: model FLOPs (recompute excluded) per second per GPU over the device's peak for the
//   training precision (Chowdhery et al. 2022, arXiv 2204.02311, appendix B).

#include <array>
#include <string>
#include <vector>

#include "report/host_offload_report.hpp"
#include "sim/engine.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::strat {

struct DeviceMemory {
  std::string device;
  int stage = 0;
  double peak_bytes = 0;           // the ledger's peak: bytes tensors asked for (requested)
  // The ledger replayed through PyTorch's caching allocator (report/memory/allocator_replay.hpp):
  // its peak of blocks handed to tensors (max_memory_allocated) and of segments held
  // (max_memory_reserved), the retries (cache freed to make room) and requests it could not meet.
  double allocated_bytes = 0;
  double reserved_bytes = 0;
  std::int64_t allocator_retries = 0;        // per step
  // 1: a request found no room for the reserved segments within the HBM (and its size)
  std::int64_t allocator_out_of_memory = 0;
  double allocator_out_of_memory_bytes = 0;
  double cuda_context_bytes = 0;   // outside the allocator (costmodel/non_tensor_memory.hpp)
  double nccl_buffer_bytes = 0;    // outside the allocator: its communicators' buffers
  double dispatch_buffer_bytes = 0;  // outside the allocator: DeepEP's buffers (flex dispatcher)
  double userbuffer_bytes = 0;  // outside the allocator: TE's userbuffers (tp_comm_overlap)
  double device_bytes = 0;  // allocated_bytes + the four outside the allocator
  bool fits_in_hbm = true;  // device_bytes <= the device's HBM capacity
  std::vector<std::pair<std::string, double>> breakdown_bytes;  // category -> bytes at the peak
};

// Collectives of one kind and operation, averaged over the simulated instances; algbw and busbw
// follow nccl-tests (algbw = S / t, busbw = algbw x factor(op, n)).
struct CollectiveSummary {
  std::string kind;       // "tp", "pp", "dp"
  std::string op;         // "all-reduce", ...
  int group_size = 1;
  double count_per_gpu = 0;     // instances each member GPU takes part in per step
  double mean_message_bytes = 0;
  double mean_time_s = 0;       // from the last member's arrival to the end
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
};

// Optimizer updates crossed by the micro-batches of one stage: for each micro-batch, the stage's
// weight version when its backward started minus the version its forward used (the version current
// at the forward's start; for PipeDream-2BW the version of its group, pinned at the group's first
// forward).
struct StageStaleness {
  int max = 0;
  double mean = 0;
  std::vector<std::pair<int, int>> histogram;  // (updates crossed, micro-batches)
};

struct StepReport {
  std::string scenario;
  std::string schedule;
  bool asynchronous = false;
  int steps_simulated = 1;           // optimizer steps (global batches) simulated
  int warmup_steps = 0;              // excluded from the steady-state figures
  double simulated_time_s = 0;       // end of the whole simulated run
  bool full = false;
  int simulated_devices = 0;
  int total_gpus = 0;
  int micro_batches = 0;
  double step_time_s = 0;
  double pipeline_time_s = 0;        // to the end of the last backward pass
  double tokens_per_step = 0;
  double tokens_per_s = 0;
  double model_flops_per_step = 0;
  double executed_flops_per_step = 0;
  double model_tflops_per_gpu = 0;   // model TFLOP/s per GPU
  double mfu = 0;
  double hfu = 0;                    // executed (recompute included) over peak
  // The optimizer step per step on the first simulated device (stage 0; in symmetric mode its
  // replica is the busiest data-parallel rank, whose blocks the optimizer's cost is computed for):
  // its optimizer ops on the compute stream (AdamW's update; Shampoo/DASH's factor update,
  // inverse roots, preconditioning and grafting) and the all-gather that returns the updated
  // parameters to every replica (Shampoo/DASH's update all-gather with dp > 1, ZeRO-1/2's param
  // all-gather), each from its start (a collective from its last member's arrival) to its end.
  // optimizer_s is the sum of the parts, in issue order in optimizer_breakdown_s.
  double optimizer_s = 0;
  std::vector<std::pair<std::string, double>> optimizer_breakdown_s;
  // FP8: per stage, seconds per step one GPU spends in quantisation kernels (BuiltWorkload::
  // fp8_quantization_s); empty without FP8.
  std::vector<double> fp8_quantization_s;
  int optimizer_host_ops = 0;    // Shampoo/DASH: ops the host issues per step (stage 0)
  int optimizer_host_syncs = 0;  // and host reads of device values; 0 for AdamW
  // The framework's host thread (training.framework; strategies/framework/): its name, the time
  // its host ops take per step (busy time of the host stream, mean over simulated devices), the
  // syncs it makes per step (mean), and the host's share of the critical path (the "host"
  // category of critical_path_s: time the GPU waited for the host to issue or to return from a
  // sync).
  std::string framework;
  double host_busy_s = 0;
  double host_syncs_per_step = 0;
  double host_critical_path_s = 0;
  // The window of bubble_fraction (and, for asynchronous schedules, of step_time_s): flush
  // schedules [0, pipeline end]; asynchronous ones the steady state after the warm-up steps.
  double window_begin_s = 0;
  double window_end_s = 0;
  std::vector<double> bubble_fraction;                 // per stage
  std::vector<StageStaleness> staleness;               // per stage
  std::vector<int> weight_versions;                    // per stage: versions held at once
  std::array<double, kCommKinds> exposed_comm_s{};     // per GPU, by kind
  std::array<double, kCommKinds> comm_bytes{};         // whole cluster, by kind
  double link_bytes_intra_node = 0;
  double link_bytes_inter_node = 0;
  std::vector<CollectiveSummary> collectives;
  std::vector<DeviceMemory> memory;                    // per simulated device
  double hbm_capacity_bytes = 0;
  bool fits_in_hbm = true;                             // every device fits (DeviceMemory::fits_in_hbm)
  std::optional<HostOffloadReport> host_offload;       // with optimizer offload only
  // Critical path: seconds by op category (compute forward/backward, tp-comm, ...), largest
  // share first (ties in name order).
  std::vector<std::pair<std::string, double>> critical_path_s;
  std::size_t ops = 0;
  std::uint64_t events = 0;
};

StepReport make_step_report(const Scenario& scenario, const BuiltWorkload& built,
                            const sim::SimResult& result);

}  // namespace parasim::strat
