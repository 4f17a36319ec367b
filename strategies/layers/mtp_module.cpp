#include "strategies/layers/mtp_module.hpp"

#include "strategies/layers/layer_kernels.hpp"
#include "strategies/layers/step_writer.hpp"

namespace parasim::strat::detail {
namespace {

void append(std::vector<LayerStep>& to, const std::vector<LayerStep>& from) {
  const int base = static_cast<int>(to.size());
  for (LayerStep s : from) {
    for (int& a : s.after) a += base;  // indices into the list they now belong to
    to.push_back(std::move(s));
  }
}

// The module's own kernels before its layer: embedding rows, two norms, the concatenation and
// the projection (column-parallel: [T x 2h] x [2h x h/t]).
void block_forward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out) {
  const double bsh = x.act(x.tokens() * x.h);
  w.memory(bsh + x.tokens() * 8);   // the shared table's rows for the shifted tokens
  w.memory(2 * hidden_bytes(x));    // norm of the embedding
  w.memory(2 * hidden_bytes(x));    // norm of the previous hidden states
  w.memory(4 * hidden_bytes(x));    // concatenation
  w.close(out, "mtp norms");
  if (x.t > 1 && x.sp) {
    StepWriter::collective(out, "mtp all-gather", CollectiveKind::kAllGather, 2 * bsh);
  }
  w.linear(x.tokens(), x.h / x.t, 2 * x.h);
  if (x.t > 1) w.memory(2 * x.act(x.tokens() * x.h / x.t));  // the output back to the layout
  w.close(out, "mtp proj");
}

void block_backward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out) {
  const double bsh = x.act(x.tokens() * x.h);
  w.linear_backward(x.tokens(), x.h / x.t, 2 * x.h);
  w.close(out, "mtp proj bwd");
  if (x.t > 1 && x.sp) {
    StepWriter::collective(out, "mtp bwd reduce-scatter", CollectiveKind::kReduceScatter,
                           2 * bsh);
  }
  w.memory(4 * hidden_bytes(x));  // the concatenation's split
  norm_backward(w, x);
  norm_backward(w, x);
  w.memory(3 * bsh);              // the embedding rows' scatter-add
  w.close(out, "mtp norms bwd");
}

}  // namespace

void append_mtp_modules(const Scenario& sc, const cost::CostModel& costs, LayerProgram& head) {
  const int depth = sc.model.mtp_layers;
  if (depth <= 0) return;
  const Dims x = dims_of(sc);
  const LayerKind kind =
      sc.model.moe.is_moe_layer(sc.model.layers - 1) ? LayerKind::kMoe : LayerKind::kDense;
  const LayerProgram layer = transformer_layer_program(sc, costs, kind);
  const LayerProgram main_head = head;  // the shared head's passes, once per module
  LayerProgram block;
  {
    StepWriter w(costs, sc.training.precision);
    if (sc.training.fp8.enabled()) w.quantize_linears(linear_quant_of(sc));
    block_forward(w, x, block.forward);
    block_backward(w, x, block.backward);
    block.fp8_weights = w.weight_step();
    StepWriter split(costs, sc.training.precision);
    if (sc.training.fp8.enabled()) split.quantize_linears(linear_quant_of(sc));
    ComputeBlock weights;
    split.set_weight_sink(&weights);
    block_backward(split, x, block.backward_input);
    weights.label = "mtp wgrad";
    LayerStep step;
    step.compute = weights;
    block.weight_grad.push_back(step);
  }
  // Autograd runs the modules' backward before the main head's, the last module first; each
  // list (the whole backward, and zero bubble's B and W) in that order.
  using Steps = std::vector<LayerStep> LayerProgram::*;
  auto backward_of = [&](Steps list) {
    std::vector<LayerStep> out;
    for (int k = 0; k < depth; ++k) {
      append(out, main_head.*list);
      append(out, layer.*list);
      append(out, block.*list);
    }
    append(out, main_head.*list);
    return out;
  };
  for (int k = 0; k < depth; ++k) {
    append(head.forward, block.forward);
    append(head.forward, layer.forward);
    append(head.forward, main_head.forward);
  }
  std::vector<LayerStep> backward = backward_of(&LayerProgram::backward);
  std::vector<LayerStep> backward_input = backward_of(&LayerProgram::backward_input);
  std::vector<LayerStep> weight_grad = backward_of(&LayerProgram::weight_grad);
  head.backward = std::move(backward);
  head.backward_input = std::move(backward_input);
  head.weight_grad = std::move(weight_grad);
  const double projection_flops = 3 * 2 * x.tokens() * 2 * x.h * x.h / x.t;
  head.model_flops = cost::Flops{
      head.model_flops.value +
      depth * (layer.model_flops.value + main_head.model_flops.value + projection_flops)};
  head.fp8_weights.add(layer.fp8_weights, depth);  // FP8 weights: per module
  head.fp8_weights.add(block.fp8_weights, depth);
  const double projection_input = 2 * x.act(x.tokens() * x.h);
  head.activation_stored_bytes +=
      depth * (layer.activation_stored_bytes + main_head.activation_stored_bytes + projection_input);
  head.activation_full_bytes +=
      depth * (layer.activation_full_bytes + main_head.activation_full_bytes + projection_input);
}

}  // namespace parasim::strat::detail
