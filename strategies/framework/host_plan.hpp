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

// Host time of `kernels` eager kernel launches of one pass (per-op cost + launch each; 0 with
// CUDA graphs is the caller's choice, these are outside the graphs).
inline sim::Time eager_launches(int kernels, sim::Time per_op, sim::Time launch) {
  return (per_op + launch) * kernels;
}

}  // namespace parasim::strat
