#include "strategies/layers/mla_attention.hpp"

#include "strategies/layers/attention_core.hpp"
#include "strategies/layers/layer_kernels.hpp"

namespace parasim::strat::detail {
namespace {

struct MlaWidths {
  double q_in, qk, kv_in, kv_up, v_out;
};

MlaWidths widths(const Dims& x, const MlaSpec& m) {
  MlaWidths r;
  r.qk = x.a * (m.qk_nope_head_dim + m.qk_rope_head_dim) / x.t;  // the queries of this rank
  r.kv_in = m.kv_lora_rank + m.qk_rope_head_dim;                  // the down projection's output
  r.kv_up = x.a * (m.qk_nope_head_dim + m.v_head_dim) / x.t;
  r.v_out = x.a * m.v_head_dim / x.t;
  r.q_in = m.q_lora_rank;
  return r;
}

}  // namespace

Dims mla_core_dims(const Dims& x, const MlaSpec& mla) {
  Dims core = x;
  core.kv = x.a;
  core.d = (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim) / 2.0;
  return core;
}

// The up projections, RoPE and the joins of q and k, from the latents to the core's inputs.
void up_projections_forward(StepWriter& w, const Dims& x, const MlaSpec& mla) {
  const MlaWidths m = widths(x, mla);
  const double T = x.tokens();
  if (mla.q_lora_rank > 0) w.linear(T, m.qk, m.q_in);         // q up
  w.linear(T, m.kv_up, mla.kv_lora_rank);                     // kv up
  const double rope_q = x.act(T * x.a * mla.qk_rope_head_dim / x.t);
  w.memory(2 * rope_q);                                     // RoPE on the queries
  w.memory(2 * x.act(T * mla.qk_rope_head_dim));            // RoPE on the shared key part
  w.memory(2 * x.act(T * m.qk));                            // the queries joined
  w.memory(2 * x.act(T * m.qk));                            // the keys joined (rope broadcast)
}

void mla_attention_forward(StepWriter& w, const Dims& x, const MlaSpec& mla,
                           std::vector<LayerStep>& out) {
  const MlaWidths m = widths(x, mla);
  const double T = x.tokens(), bsh = x.act(T * x.h);
  if (x.t > 1 && x.sp) StepWriter::collective(out, "attn all-gather", CollectiveKind::kAllGather, bsh);
  w.memory(2 * hidden_bytes(x));  // input norm
  if (mla.q_lora_rank > 0) {
    w.linear(T, m.q_in, x.h);                 // q down (duplicated)
    w.memory(2 * x.act(T * m.q_in));        // q norm
  } else {
    w.linear(T, m.qk, x.h);
  }
  w.linear(T, m.kv_in, x.h);                                  // kv down (duplicated)
  w.memory(2 * x.act(T * mla.kv_lora_rank));                // kv norm
  up_projections_forward(w, x, mla);
  attention_core_forward(w, mla_core_dims(x, mla));
  w.linear(T, x.h, m.v_out);                                  // output projection
  bias_dropout_add(w, x);
  w.close(out, "attn");
  if (x.t > 1) {
    StepWriter::collective(out, x.sp ? "attn reduce-scatter" : "attn all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bsh);
  }
}

void mla_attention_backward(StepWriter& w, const Dims& x, const MlaSpec& mla, bool recompute_core,
                            bool recompute_up, std::vector<LayerStep>& out) {
  const MlaWidths m = widths(x, mla);
  const double T = x.tokens(), bsh = x.act(T * x.h);
  if (x.t > 1 && x.sp) {
    StepWriter::collective(out, "attn bwd all-gather", CollectiveKind::kAllGather, bsh);
  }
  bias_dropout_add_backward(w, x);
  w.linear_backward(T, x.h, m.v_out);
  const Dims core = mla_core_dims(x, mla);
  // mla_up_proj: q, k and v rerun from the kept latents before the core's backward
  // (discard_output_and_register_recompute on the core's output, multi_latent_attention.py).
  if (recompute_up) up_projections_forward(w, x, mla);
  if (recompute_core) attention_core_forward(w, core);
  attention_core_backward(w, core);
  w.memory(2 * x.act(T * m.qk));                            // the joins' gradients, split
  w.memory(2 * x.act(T * m.qk));
  w.memory(2 * x.act(T * x.a * mla.qk_rope_head_dim / x.t));  // RoPE backward
  w.memory(2 * x.act(T * mla.qk_rope_head_dim));
  w.linear_backward(T, m.kv_up, mla.kv_lora_rank);
  for (double width : {static_cast<double>(mla.kv_lora_rank), m.q_in}) {  // latent norms
    if (width > 0) norm_backward_of(w, x.act(T * width));
  }
  w.linear_backward(T, m.kv_in, x.h);
  if (mla.q_lora_rank > 0) {
    w.linear_backward(T, m.qk, m.q_in);
    w.linear_backward(T, m.q_in, x.h);
  } else {
    w.linear_backward(T, m.qk, x.h);
  }
  w.memory(3 * hidden_bytes(x));  // the down projections' input gradients summed
  norm_backward(w, x);
  residual_gradient_add(w, x);
  w.close(out, "attn bwd");
  if (x.t > 1) {
    StepWriter::collective(out, x.sp ? "attn bwd reduce-scatter" : "attn bwd all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bsh);
  }
}

}  // namespace parasim::strat::detail
