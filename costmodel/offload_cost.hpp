#pragma once
// parasim::cost optimizer offload — what moves to host memory, the bytes each GPU moves over its
// host link per step, and the CPU optimizer step's time. One place for the workload builder
// (strategies/data_parallel/offload_emission.cpp) and the planner's memory floor. docs/offload.md.
//
// Flavours (each as its trainer's code does it):
// - kDeepSpeed: ZeRO-Offload (Ren et al. 2021, arXiv 2101.06840), DeepSpeed's
//   `zero_optimization.offload_optimizer.device: cpu` with ZeRO stage 2
//   (deepspeed/runtime/zero/stage_1_and_2.py, DeepSpeed 0.19.8 sdist): the rank's partition
//   of fp32 master weights, momentum, variance and fp32 gradients lives in host memory; the GPU
//   keeps its 16-bit weights and no gradient partition. Per step and rank, with P the
//   partition's parameter count, m micro-batches and g the 16-bit gradient size:
//     m = 1:  D2H 4 P (async_inplace_copy_grad_to_fp32_buffer_from_gpu, L1888: src.to(fp32) on
//             the GPU, L1900, then copied)
//     m > 1:  D2H m g P + 4 P  (copy_grads_in_partition, L2166 -> async_accumulate_grad_in_cpu_
//             via_gpu, L1809, on every micro-batch: copy_gradients_to_cpu, L1843; then the fp32
//             copy at the boundary)
//             H2D (m - 1) g P   (accumulate_gradients when micro_step_id > 0, L1855)
//     H2D 2 P (after the step, L3095: fp32 -> 16-bit pinned buffer on the CPU, then copied,
//             non_blocking)
//   The step is DeepSpeedCPUAdam (csrc/includes/cpu_adam.h, Step_AVX: loads grad, momentum,
//   variance, param, 4 B each, L177-186; stores param, momentum, variance, L207-209) then the
//   16-bit copy (read 4, write 2): kDeepSpeedCpuAdamBytes = 16 + 12 + 6 = 34 B of DRAM traffic
//   per parameter.
//   With `params` (ZeRO-Infinity, zero_optimization.offload_param.device cpu, with ZeRO-3 and
//   the optimizer offload; deepspeed/runtime/zero/stage3.py, DeepSpeed 0.19.6 @edaa722): the
//   16-bit parameter partition lives in pinned host memory (each gather copies it in:
//   zero3_gather_units.hpp) and the step writes it there (_reassign_or_swap_out_partitioned_
//   parameters, a CPU copy: no copy back). Gradients (partition_grads, L1886-1935): every
//   micro-batch's reduced partition goes to the pinned 16-bit buffer on the host and comes back
//   (micro-batch 0: copy_ then `.to(device)`; later ones: `.to(device)`, add on the GPU, copy_
//   back), and at the boundary the fp32 copy (_offload_grad_partition_at_boundary, L1393-1407):
//     D2H m g P + 4 P, H2D m g P. Host: 12 + 4 + 2 (16-bit gradient buffer) + 2 (parameters).
// - kMegatron: megatron-core 0.19.2's --optimizer-cpu-offload (HybridDeviceOptimizer,
//   megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py) over the distributed optimizer's
//   fp32 shards: the first `fraction` of the shard's parameters get a pinned fp32 CPU copy and
//   torch.optim.AdamW on the CPU (megatron/core/optimizer/__init__.py: `from torch.optim import
//   AdamW as CPUAdam`). The GPU keeps its fp32 main parameter (the copy target) and drops the
//   momentum and variance of the offloaded part; the host holds fp32 param, grad, momentum and
//   variance (16 B). Per step: D2H 4 f P (fp32 main grads, _set_sub_optimizer_grads), H2D 4 f P
//   (param_copy_back_gpu_hook). With --overlap-cpu-optimizer-d2h-h2d each parameter has its own
//   CPU optimizer, its D2H on a side stream and its step waiting for its own copy's event, its
//   H2D after its step: copies overlap the CPU steps; without it all D2H, then all steps, then
//   all H2D (one stream).
// - kFsdp2: FSDP2's CPUOffloadPolicy (torch.distributed.fsdp): parameters, gradients and optimizer
//   state of the shard on the CPU, torch AdamW on the CPU. Memory and the CPU step here; its
//   copies are per unit (each gather's shard in, each reduction's gradient out:
//   strategies/data_parallel/fsdp2_units.hpp, Fsdp2HostCopyBytes), so offload_link_bytes gives
//   0 for it.
// torch.optim.AdamW on CPU tensors (torch/optim/adam.py, _single_tensor_adam; foreach and fused
// are not the CPU default): param.mul_ (8 B), exp_avg.lerp_ (12), exp_avg_sq.mul_ (8),
// .addcmul_ (12), sqrt (8), / (8), .add_ (8), param.addcdiv_ (16): kTorchCpuAdamWBytes = 80.
// Megatron's HybridDeviceOptimizer builds that default (kMegatron). torchtitan builds its AdamW
// with fused=True (0.3.0 components/optimizer/optimizer.py: implementation "fused" by default),
// which torch 2.15 runs on CPU tensors too (utils/_foreach_utils.py lists "cpu" among the fused
// devices): one _fused_adamw_ pass reading parameter, gradient and both moments (16 B) and
// writing three (12 B): kTorchFusedCpuAdamWBytes = 28 (kFsdp2, which torchtitan offers).
// The CPU step is memory bound: time = P x bytes per parameter / (the node's DRAM bandwidth /
// the ranks of the node stepping at once). Stores' write-allocate reads are not counted (a lower
// bound of the traffic).

#include <string_view>

#include "costmodel/model_state_memory.hpp"
#include "costmodel/units.hpp"
#include "sim/time.hpp"

namespace parasim::cost {

enum class OffloadFlavour { kNone, kDeepSpeed, kMegatron, kFsdp2 };
// "none", "deepspeed", "megatron", "fsdp2".
const char* offload_flavour_name(OffloadFlavour f);

struct OffloadSpec {
  OffloadFlavour flavour = OffloadFlavour::kNone;
  // Megatron's --optimizer-offload-fraction: the share of the rank's optimizer shard on the CPU.
  double fraction = 1.0;
  // Megatron's --overlap-cpu-optimizer-d2h-h2d.
  bool overlap = true;
  // DeepSpeed's offload_optimizer.pin_memory (page-locked buffers; false: pageable copies, which
  // this model does not price differently: refused by the rules unless true).
  bool pin_memory = true;
  // DeepSpeed's offload_param (ZeRO-3 / ZeRO-Infinity): parameters in host memory too.
  bool params = false;
  bool enabled() const { return flavour != OffloadFlavour::kNone; }
};

inline constexpr double kDeepSpeedCpuAdamBytes = 34;  // per parameter, see above
inline constexpr double kTorchCpuAdamWBytes = 80;     // per parameter, see above
inline constexpr double kTorchFusedCpuAdamWBytes = 28;  // per parameter, see above

// One rank's model state split between HBM and host memory.
struct OffloadMemory {
  ModelStateBytes hbm;  // what stays on the GPU
  Bytes host;           // what the rank holds in host memory
};

// `gpu_only`: the rank's model state without offload (model_state_bytes of its parameters);
// `shard`: the parameters whose optimizer state the rank owns (after ZeRO's partitioning).
// Mixed precision only (fp32 master weights exist). Flavour kNone returns gpu_only, host 0.
OffloadMemory offload_memory(const OffloadSpec& spec, const ModelStateBytes& gpu_only,
                             double shard);

// Bytes one rank moves over its host link per step, each direction.
struct HostLinkBytes {
  Bytes d2h;
  Bytes h2d;
};
// `shard` parameters owned, `micro_batches` per step, `grad_bytes` per 16-bit gradient element.
HostLinkBytes offload_link_bytes(const OffloadSpec& spec, double shard, int micro_batches,
                                 double grad_bytes);

// Parameters the CPU steps per rank, and the bytes of DRAM traffic per parameter.
double offloaded_parameters(const OffloadSpec& spec, double shard);
double cpu_step_bytes_per_parameter(const OffloadSpec& spec);
// Time of one rank's CPU optimizer step over `parameters`, with `ranks_per_node` ranks sharing
// the node's DRAM bandwidth `node_bandwidth` (bytes/s, > 0).
sim::Time cpu_optimizer_time(const OffloadSpec& spec, double parameters, double node_bandwidth,
                             int ranks_per_node);
// The planner screen's closed form of the offloaded step after the backward (a lower bound of
// what the builder's timeline gives): the step's own copies at `link_bandwidth` (bytes/s per
// direction) and the CPU step, in series (DeepSpeed; Megatron without overlap) or, pipelined
// (Megatron's --overlap-cpu-optimizer-d2h-h2d), the slowest of the three. DeepSpeed's
// accumulation copies of earlier micro-batches run under the backward and are left out.
sim::Time offload_step_time(const OffloadSpec& spec, double shard, double link_bandwidth,
                            double node_bandwidth, int ranks_per_node);

}  // namespace parasim::cost
