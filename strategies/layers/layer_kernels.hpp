#pragma once
// Internal to strategies/layers: the memory-bound kernels a transformer layer's blocks share
// (norms, bias-dropout-add, the residual stream's gradient), used by the dense MLP and attention
// (layer_program.cpp) and the MoE block (moe_layer.cpp). Not a public header.

#include "strategies/layers/step_writer.hpp"

namespace parasim::strat::detail {

// Elementwise bytes over the hidden state of this rank (sequence-sharded with SP).
inline double hidden_bytes(const Dims& x) {
  return x.act(x.tokens() * x.h) / (x.sp ? x.t : 1.0);
}

// Bias-dropout-add after a row-parallel linear (Megatron's bias_dropout_add_fused_train, one
// TorchScript-fused kernel; with --no-bias-dropout-fusion torch's x + bias, dropout and the
// residual add apart).
inline void bias_dropout_add(StepWriter& w, const Dims& x) {
  const double hb = hidden_bytes(x);
  if (x.fusions.bias_dropout_add) {
    w.memory(3 * hb);
    return;
  }
  if (x.bias) w.memory(2 * hb);                // x + bias
  if (x.dropout) w.memory(2 * hb + hb / x.e);  // dropout: read, write, a 1-byte mask
  w.memory(3 * hb);                            // residual + out
}

// Its backward: the gradient through the dropout mask (one kernel either way), then the bias
// gradient, a reduction over the tokens (the expand's backward, sum_to_size).
inline void bias_dropout_add_backward(StepWriter& w, const Dims& x) {
  w.memory(3 * hidden_bytes(x));
  if (x.bias) w.memory(hidden_bytes(x));
}

// apex's fused LayerNorm / RMSNorm backward (layer_norm_cuda_kernel.cu:
// cuComputePartGradGammaBeta, cuComputeGradGammaBeta, cuComputeGradInput): partial weight
// gradients (read the input and the gradient), their reduction (partials only, counted as no
// bytes), the input gradient (read both, write); `bytes` is the normalised tensor's.
inline void norm_backward_of(StepWriter& w, double bytes) {
  w.memory(2 * bytes);
  w.memory(0);
  w.memory(3 * bytes);
}
// The layer norms' backward over this rank's hidden state.
inline void norm_backward(StepWriter& w, const Dims& x) { norm_backward_of(w, hidden_bytes(x)); }

// The residual stream's gradient, summed where the hidden state had two consumers (the norm and
// the residual add): autograd's InputBuffer adds them.
inline void residual_gradient_add(StepWriter& w, const Dims& x) {
  w.memory(3 * hidden_bytes(x));
}

// Query and key norms (Qwen3's q_norm / k_norm per head, OLMoE's over all heads): one RMSNorm
// kernel over this rank's queries and one over its keys, each reading and writing them.
inline void qk_norm_forward(StepWriter& w, const Dims& x) {
  if (x.qk_norm == QkNorm::kNone) return;
  w.memory(2 * x.act(x.tokens() * x.a * x.d / x.t));
  w.memory(2 * x.act(x.tokens() * x.kv * x.d / x.t));
}

// The dense MLP's activation between fc1 and fc2 over this rank's [tokens, f / t].
inline void mlp_activation(StepWriter& w, const Dims& x) {
  const double bsf = x.act(x.tokens() * x.f / x.t);
  if (x.swiglu) {
    w.memory(3 * bsf);  // SwiGLU
  } else if (x.fusions.bias_gelu || !x.bias) {
    w.memory(2 * bsf);  // (bias-)GeLU
  } else {
    w.memory(2 * bsf);  // fc1 + bias
    w.memory(2 * bsf);  // GeLU
  }
}

}  // namespace parasim::strat::detail
