#pragma once
// parasim::strat host plan — the host time a framework spends issuing each step of a layer
// program (framework.hpp explains the host model), for the workload builder's host ops.
//
// A compute step of k kernels costs the host k x (the pass's per-op cost + the device's launch)
// plus its share of the layer's Python work that launches nothing (host-only ops, autograd
// functions, TorchScript calls, a checkpointed layer's nested backward), spread over the
// layer's kernels of that pass in proportion to their count (the remainder of the integer
// picoseconds on the part's last kernel-bearing step, so the shares add up exactly). Its first
// kernel is issued after the first kernel's share. A collective step costs one collective call,
// issued at its end. Which per-op cost: steps of a forward list are forward ops (under
// torch.no_grad when the layer is checkpointed, recompute "full"), steps of a backward list are
// backward ops except the recomputed forward (LayerStep::recompute), which records autograd.
// With CUDA graphs every step costs the host nothing (the item's one graph launch is the
// builder's). Syncs (LayerStep::syncs_after) are the builder's: they split the host op.

#include <array>
#include <vector>

#include "costmodel/hardware.hpp"
#include "sim/time.hpp"
#include "strategies/framework/framework.hpp"

namespace parasim::strat {

struct LayerStep;

// GPU time between two kernels that are both queued (the host is ahead): about 0.9 us per
// kernel when 80 small kernels are replayed as a CUDA graph (70 us in all; CUDA.jl's
// documentation, "CUDA graphs", cuda.juliagpu.org/dev/usage/graphs) [derived]. The same for every
// device here, a simplification.
inline constexpr sim::Time kQueuedKernelGap = sim::Time::ns(900);

// The GPU-side gap of `device`: kQueuedKernelGap, but never more than the device's whole launch
// (DeviceSpec::kernel_launch_overhead, host call plus GPU dispatch), whose GPU part it is; a
// device written with free launches has no gap either.
inline sim::Time queued_kernel_gap(const cost::DeviceSpec& device) {
  return device.kernel_launch_overhead < kQueuedKernelGap ? device.kernel_launch_overhead
                                                          : kQueuedKernelGap;
}

struct StepHost {
  sim::Time first;  // host time until the step's first kernel (a collective: its call) is issued
  sim::Time total;  // host time of the whole step
};

// What a list of steps is, for its host costs.
struct HostContext {
  bool layer = false;         // a transformer layer: the framework's per-layer counts apply
  bool backward = false;      // a backward (or weight-gradient) list
  bool checkpointed = false;  // the layer is fully recomputed: its forward runs under no_grad
                              // and its backward pays FrameworkHostCosts::checkpointed_layer
};

// Per step of `steps`: its host time (launch = the device's kernel_launch_overhead).
std::vector<StepHost> step_host_costs(const std::vector<LayerStep>& steps, HostContext context,
                                      const FrameworkSpec& framework, sim::Time launch);

// Host work outside a pipeline item's steps, in the order the builder's host runs it
// (host_emission.cpp, host_item_start / host_item_end / host_optimizer), shared with the planner's
// screen (planner/host_timing.hpp) so that both see the same host: `work` of host time, then
// `syncs` syncs (each waits until the GPU has run everything issued before, then costs
// FrameworkHostCosts::sync).
struct HostAction {
  sim::Time work;
  int syncs = 0;
};
struct HostActions {
  std::array<HostAction, 3> items{};
  int count = 0;
  void add(sim::Time work, int syncs) { items[static_cast<std::size_t>(count++)] = {work, syncs}; }
  const HostAction* begin() const { return items.data(); }
  const HostAction* end() const { return items.data() + count; }
};

// What a pipeline item is, for its host work: a forward, a backward (input gradient), a
// weight-gradient pass or the optimizer item; whether it receives its input (a forward on a
// virtual stage > 0, a backward below the last) or sends its output.
enum class HostItem : std::uint8_t { kForward, kBackward, kWeightGrad, kOptimizer };
// Whether virtual stage `vstage` (of 0 .. last_vstage) runs a forward's get_batch work
// (FrameworkCounts::batch_on_every_stage): the first (tokens) and the last (labels); with
// `last_with_first` (a V: the loss on the first stage's GPU) the first's load serves both.
inline bool loads_batch(const FrameworkSpec& framework, int vstage, int last_vstage,
                        bool last_with_first = false) {
  return framework.counts.batch_on_every_stage || vstage == 0 ||
         (vstage == last_vstage && !last_with_first);
}

// Before the item's steps: the CUDA-graph replay launch; the receive's call and p2p syncs; a
// forward's micro-batch work (host loop; where the stage `loads` the batch, the data and mask
// kernels and the start syncs); a backward's start syncs.
HostActions item_start_host(const FrameworkSpec& framework, HostItem kind, bool receives,
                            bool loads, sim::Time launch);
// After its steps: the end syncs, then the send's call.
HostActions item_end_host(const FrameworkSpec& framework, HostItem kind, bool sends);
// The step's host work before the optimizer's ops: the per-step loop and its eager launches
// (fixed and per parameter tensor of the stage), then the step's syncs (fp16: one per tensor
// more). `tensors`: the stage's parameter tensors.
HostAction optimizer_host(const FrameworkSpec& framework, int tensors, bool fp16, sim::Time launch);

// Host time of `kernels` eager kernel launches of one pass (per-op cost + launch each; 0 with
// CUDA graphs is the caller's choice, these are outside the graphs).
inline sim::Time eager_launches(int kernels, sim::Time per_op, sim::Time launch) {
  return (per_op + launch) * kernels;
}

}  // namespace parasim::strat
