#include "strategies/framework/host_plan.hpp"

#include <cstdint>

#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {
namespace {

// One pass of a layer inside a list: its steps [begin, end), whether they are forward ops, and
// the Python work to spread over its kernels.
struct Part {
  std::size_t begin = 0, end = 0;
  bool forward = true;
};

}  // namespace

std::vector<StepHost> step_host_costs(const std::vector<LayerStep>& steps, HostContext ctx,
                                      const FrameworkSpec& f, sim::Time launch) {
  std::vector<StepHost> out(steps.size());
  if (f.cuda_graphs) return out;  // replayed: nothing per op
  const auto& h = f.host;
  const auto& c = f.counts;
  // The parts: a forward list is one forward part; a backward list is its recomputed forward
  // (leading steps marked recompute) then the backward.
  std::vector<Part> parts;
  if (!ctx.backward) {
    parts.push_back({0, steps.size(), true});
  } else {
    std::size_t split = 0;
    while (split < steps.size() && steps[split].recompute) ++split;
    if (split > 0) parts.push_back({0, split, true});
    parts.push_back({split, steps.size(), false});
  }
  for (const Part& part : parts) {
    const bool no_grad = part.forward && !ctx.backward && ctx.checkpointed;
    sim::Time per_op =
        (part.forward ? (no_grad ? h.forward_op_no_grad : h.forward_op) : h.backward_op) + launch;
    sim::Time extras;
    if (ctx.layer && f.compile.compiles_blocks()) {
      // A compiled block: the wrapper's launches, and one region call per pass (a recomputed
      // forward runs inside the compiled backward: no call of its own).
      per_op = h.compiled_kernel + launch;
      if (!ctx.backward) extras = h.compiled_region_forward;
      else if (!part.forward) extras = h.compiled_region_backward;
    } else if (ctx.layer && part.forward) {
      extras = h.host_only_op * c.layer_host_only_ops +
               h.autograd_function * c.layer_autograd_functions + h.jit_call * c.layer_jit_calls;
    } else if (ctx.layer) {
      extras = h.autograd_function * c.layer_autograd_functions +
               (ctx.checkpointed ? h.checkpointed_layer : sim::Time::zero());
    }
    std::int64_t kernels = 0;
    for (std::size_t i = part.begin; i < part.end; ++i) {
      if (!steps[i].is_collective) kernels += steps[i].compute.kernels;
    }
    std::int64_t seen = 0;
    sim::Time spread;  // extras given out so far
    std::size_t last_with_kernels = part.end;
    for (std::size_t i = part.begin; i < part.end; ++i) {
      const LayerStep& s = steps[i];
      if (s.is_collective) {
        out[i] = StepHost{h.collective_call, h.collective_call};
        continue;
      }
      const int k = s.compute.kernels;
      if (k == 0) continue;
      seen += k;
      // Extras up to and including this step, rounded down; the last step takes the rest.
      const sim::Time upto = sim::Time::ps(extras.picoseconds() * seen / kernels);
      const sim::Time share = upto - spread;
      spread = upto;
      out[i] = StepHost{per_op + sim::Time::ps(share.picoseconds() / k), per_op * k + share};
      last_with_kernels = i;
    }
    if (kernels == 0 && extras > sim::Time::zero() && part.begin < part.end) {
      out[part.begin].total += extras;  // a layer without kernels in this pass: on its first step
    } else if (last_with_kernels < part.end && spread < extras) {
      out[last_with_kernels].total += extras - spread;  // never: seen == kernels at the end
    }
  }
  return out;
}

HostActions item_start_host(const FrameworkSpec& f, HostItem kind, bool receives, bool loads,
                            sim::Time launch) {
  const auto& c = f.counts;
  const auto& h = f.host;
  HostActions a;
  if (f.cuda_graphs && kind != HostItem::kOptimizer) a.add(launch, 0);  // the replay
  if (receives) a.add(h.collective_call, c.p2p_syncs);  // the receive's call; its wait: emit_p2p
  if (kind == HostItem::kForward) {  // get_batch's kernels and syncs where it loads the batch
    a.add(h.micro_batch +
              (loads ? eager_launches(c.micro_batch_kernels, h.forward_op_no_grad, launch)
                     : sim::Time::zero()),
          loads ? c.forward_start_syncs : 0);
  } else if (kind == HostItem::kBackward) {
    a.add(sim::Time::zero(), c.backward_start_syncs);
  }
  return a;
}

HostActions item_end_host(const FrameworkSpec& f, HostItem kind, bool sends) {
  const auto& c = f.counts;
  HostActions a;
  if (kind == HostItem::kForward) a.add(sim::Time::zero(), c.forward_end_syncs);
  if (kind == HostItem::kBackward) a.add(sim::Time::zero(), c.backward_end_syncs);
  if (sends) a.add(f.host.collective_call, 0);  // the send's call; its wait: emit_p2p
  return a;
}

HostAction optimizer_host(const FrameworkSpec& f, int tensors, bool fp16, sim::Time launch) {
  const auto& c = f.counts;
  const auto& h = f.host;
  const int per_tensor_syncs = fp16 ? c.fp16_step_syncs_per_tensor * tensors : 0;
  return {h.step + eager_launches(c.step_kernels + c.step_kernels_per_tensor * tensors,
                                  h.forward_op_no_grad, launch),
          c.step_syncs + per_tensor_syncs};
}

}  // namespace parasim::strat
