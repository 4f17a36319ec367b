#pragma once
// parasim::strat::build_workload — turns a Scenario into the engine's Workload: one program per
// simulated device (GPU), with the layer programs laid out by the pipeline schedule, tensor-
// parallel collectives, point-to-point activations between stages, data-parallel gradient
// reduction in buckets overlapped with the backward pass, ZeRO, and the optimizer step.
//
// Symmetric mode (default): one data-parallel replica and one tensor-parallel rank per stage are
// simulated (pp devices); every collective still costs what it costs for its whole group on its
// links (its phases come from the group's real placement). Full mode simulates every GPU and every
// member of every group. On symmetric inputs both give the same step time.
//
// Streams per device: compute, host (the framework's host thread, strategies/framework/: it
// issues every GPU op, host_emission.cpp), tp-comm, dp-comm, and per model chunk pp-recv-fwd,
// pp-recv-bwd, pp-send-fwd, pp-send-bwd. Links per device: intra-node egress and ingress, NIC egress and
// ingress. Pipeline items follow strategies/schedules/pipeline_schedule.hpp; asynchronous schedules run
// several global batches back to back (async_steps) with stage-local optimizer steps.
//
// Data parallel: gradients are reduced in buckets of parallel.dp_bucket (PyTorch DDP's scheme,
// Li et al. 2020, arXiv 2006.15704), each launched when the last micro-batch's backward has
// produced all its gradients (buckets hold whole layers: a layer larger than the bucket is one
// bucket, launched at the end of that layer's backward); ZeRO-1/2 reduce-scatter instead and all-gather the updated bf16
// weights after the optimizer step (Megatron's distributed optimizer); ZeRO-3 (Rajbhandari et al.
// 2020, arXiv 1910.02054) all-gathers each layer's weights before its forward and its backward
// in the framework's units (zero3_gather_units.hpp: one per layer, or one per partitioned
// submodule as DeepSpeed does; prefetched one layer ahead) and reduce-scatters its gradients after every backward.

#include <cstdint>
#include <vector>

#include "costmodel/cost_model.hpp"
#include "costmodel/non_tensor_memory.hpp"
#include "sim/workload.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/input/workload_estimate.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {

struct BuildOptions {
  // Implicit, so that {full} and {full, limits} read as before the limits were added.
  BuildOptions(bool full_mode = false, WorkloadLimits work_limits = {})  // NOLINT
      : full(full_mode), limits(work_limits) {}
  bool full;              // simulate every GPU instead of one replica per stage
  WorkloadLimits limits;  // checked before anything is built (workload_estimate.hpp)
};

enum class CommKind : std::uint8_t {
  kTensorParallel,
  kPipeline,
  kDataParallel,
  kContextParallel,
  kExpertParallel  // the experts' dispatch and combine (ep, etp, etp x ep groups)
};
const char* comm_kind_name(CommKind kind);  // "tp", "pp", "dp", "cp", "ep"
constexpr int kCommKinds = 5;

struct SimulatedDevice {
  int stage = 0;
  int dp_rank = 0;
  int tp_rank = 0;
  int global_rank = 0;
  sim::StreamId compute_stream = 0;
  sim::StreamId host_stream = 0;  // the framework's host thread that issues its GPU ops
  int host_syncs = 0;             // syncs the host makes over the whole simulated run
};

// One pipeline item (a forward, backward or weight-gradient pass of one micro-batch, or a
// stage-local optimizer step) on one device: its first and last op.
struct PipelineSpan {
  sim::DeviceId device = 0;
  sim::OpId first = 0;
  sim::OpId last = 0;
  ItemKind kind = ItemKind::kForward;
  int micro_batch = 0;   // -1 for optimizer steps
  int chunk = 0;
  int step = 0;          // optimizer steps: which one (1-based)
};

// What a group is, for the report's collective table.
struct GroupInfo {
  CommKind kind = CommKind::kTensorParallel;
  cost::CollectiveKind op = cost::CollectiveKind::kAllReduce;
  double message_bytes = 0;  // nccl-tests S
  int group_size = 1;        // ranks in the real group (not only the simulated ones)
  bool host_copy = false;    // an offload copy over the host link: no collective, not in dp's
};

struct BuiltWorkload {
  sim::Workload workload;
  std::vector<SimulatedDevice> devices;       // index = sim::DeviceId
  std::vector<PipelineSpan> spans;
  std::vector<GroupInfo> groups;              // per group
  std::vector<std::uint8_t> link_is_inter;    // per link: NIC (1) or intra-node (0)
  std::vector<std::uint8_t> link_is_egress;   // per link
  bool full = false;                          // every GPU simulated
  ScheduleShape shape;                        // the pipeline schedule as simulated
  AsyncSteps steps;                           // optimizer steps simulated (and warm-up)
  double gpus_per_simulated_device = 1;       // dp*tp in symmetric mode, 1 in full mode
  cost::Flops model_flops_per_step;           // whole cluster, recompute excluded
  cost::Flops executed_flops_per_step;        // whole cluster, recompute included
  sim::LabelId optimizer_category = 0;
  // The device the workload was costed on: the cost model's (a profile's overrides applied), the
  // one source of hardware figures for reports (MFU's peak, HBM capacity).
  cost::DeviceSpec device;
  // Shampoo/DASH on stage 0's busiest rank: ops its eager host loop issues per step and host
  // reads of device values (optimizer_shampoo.hpp); 0 for AdamW.
  int optimizer_host_ops = 0;
  int optimizer_host_syncs = 0;
  // Per simulated device (index = sim::DeviceId): its memory outside the allocator, the CUDA
  // context and the buffers of the communicators it holds (communicators.hpp,
  // costmodel/non_tensor_memory.hpp); not in the workload's memory ledger.
  std::vector<cost::NonTensorMemory> non_tensor_memory;
  // Optimizer offload: host memory each simulated device's rank holds (bytes; offload_cost.hpp);
  // empty without offload.
  std::vector<double> host_memory;
  // Optimizer offload: each simulated device's host links (device-to-host, host-to-device).
  std::vector<std::pair<sim::LinkId, sim::LinkId>> host_links;
  // Device 0's offloaded step: its first gradient copy and its last parameter copy back.
  std::pair<sim::OpId, sim::OpId> offload_step{sim::kNone, sim::kNone};
  // FP8 (training.fp8): per stage, the GPU time one GPU spends per step in the recipe's
  // quantisation kernels (casts, amax, transposes; the weights' once-a-step casts); empty
  // without FP8.
  std::vector<double> fp8_quantization_s;
};

// Hardware figures (link bandwidths, latencies, peaks, ...) come from `costs.cluster()`, the
// scenario's cluster with a profile's overrides, never from scenario.cluster; the two must have
// the same shape (nodes x gpus_per_node), else std::invalid_argument.
// Throws cost::InputError (every limit exceeded, check_workload_limits) before building a
// workload past options.limits.
BuiltWorkload build_workload(const Scenario& scenario, const cost::CostModel& costs,
                             const BuildOptions& options);

}  // namespace parasim::strat
