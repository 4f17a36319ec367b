#include "strategies/layers/torchtitan_block.hpp"

#include <string>

#include "strategies/layers/attention_core.hpp"
#include "strategies/layers/cp_attention.hpp"
#include "strategies/layers/layer_kernels.hpp"
#include "strategies/layers/tp_overlap.hpp"

namespace parasim::strat::detail {
namespace {

// ComplexRoPE's cache, complex64 [s, d / 2] (8 bytes per pair: 4 per position and head dim),
// read once by each kernel that rotates (broadcast over the batch and the heads).
double rope_cache_bytes(const Dims& x) {
  return x.s * x.d * 4;
}

// The bytes of the block's whole (gathered) hidden state: the TP collectives' message.
double bsh(const Dims& x) {
  return x.act(x.tokens() * x.h);
}

// Elements of this rank's queries and of its keys (values alike).
double query_elements(const Dims& x) {
  return x.tokens() * x.a * x.d / x.t;
}
double key_elements(const Dims& x) {
  return x.tokens() * x.kv * x.d / x.t;
}

// The all-gather before a block under sequence parallelism (none where AsyncTP fuses it into the
// block's first GEMM, gathering its input in chunks: tp_overlap.hpp).
void open_block(const Dims& x, const std::string& label, std::vector<LayerStep>& out) {
  if (x.t > 1 && x.sp && !tp_overlap_of(x).fuses_all_gather()) {
    StepWriter::collective(out, label + " all-gather", CollectiveKind::kAllGather,
                           x.act(x.tokens() * x.h));
  }
}

// The block's kernels as `label`, then its reduction over the TP group (reduce-scatter with SP,
// all-reduce without), as Megatron's program places them (layer_program.cpp).
void close_block(StepWriter& w, const Dims& x, const std::string& label,
                 std::vector<LayerStep>& out) {
  w.close(out, label);
  if (x.t <= 1) return;
  StepWriter::collective(out, label + (x.sp ? " reduce-scatter" : " all-reduce"),
                         x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                         x.act(x.tokens() * x.h));
}

// Eager ComplexRoPE.apply_rotary_emb on `n` elements (forward) or its autograd backward (the same
// three kernels in reverse): x.float() (bf16 -> fp32; none when already fp32), the complex
// multiply by the cache (fp32 pairs read, complex64 written; backward by conj(cache)), and
// type_as back (fp32 -> bf16).
void eager_rope(StepWriter& w, const Dims& x, double n) {
  const bool casts = x.e != 4;
  if (casts) w.memory(n * (x.e + 4));
  w.memory(n * 8 + rope_cache_bytes(x));
  if (casts) w.memory(n * (4 + x.e));
}

// Compiled: the rotation fused with the split's copies (and the query/key norms): each kernel
// reads its slice of the QKV output and the cache and writes the contiguous rotated tensor;
// q alone and k with v (equal sizes), or all three in one kernel when a == kv. The backward
// writes dq, dk, dv into the joined gradient the same way.
void compiled_rope(StepWriter& w, const Dims& x) {
  const double q = x.act(query_elements(x));
  const double kv = x.act(2 * key_elements(x));
  if (x.a == x.kv) {
    w.memory(2 * (q + kv) + rope_cache_bytes(x));
    return;
  }
  w.memory(2 * q + rope_cache_bytes(x));
  w.memory(2 * kv + rope_cache_bytes(x));
}

// torch's fused RMSNorm backward (aten::_fused_rms_norm_backward): the input gradient (read the
// input and the gradient, write) and the weight gradient (read both), over `bytes`.
void torch_norm_backward(StepWriter& w, double bytes) {
  w.memory(3 * bytes);
  w.memory(2 * bytes);
}

// Inductor's weight gradient of an RMSNorm: a column reduction over the tokens, split in two
// kernels (partials, then their sum: no bytes worth counting), reading the gradient parts and
// the input (`reads` tensors of the hidden state).
void compiled_norm_weight_grad(StepWriter& w, const Dims& x, double reads) {
  w.memory(reads * hidden_bytes(x));
  w.memory(0);
}

}  // namespace

bool uses_torchtitan_block(const Scenario& sc, bool moe) {
  return sc.training.framework.kernels == LayerKernels::kTorchtitan && !moe &&
         !sc.model.mla.enabled();
}

void torchtitan_attention_forward(StepWriter& w, const Dims& x, bool compiled,
                                  std::vector<LayerStep>& out) {
  const double hb = hidden_bytes(x);
  const TpOverlap overlap = tp_overlap_of(x);
  open_block(x, "attn", out);
  w.memory(2 * hb);  // attention_norm
  if (overlap.fuses_all_gather()) {
    all_gather_gemm(w, overlap, out, "attn norm",
                    {x.tokens(), (x.a + 2 * x.kv) * x.d / x.t, x.h, "attn wqkv"}, bsh(x));
  } else {
    w.linear(x.tokens(), (x.a + 2 * x.kv) * x.d / x.t, x.h);  // wqkv
  }
  if (compiled) {
    compiled_rope(w, x);
  } else {
    w.memory(2 * x.act(query_elements(x)));  // q, k, v made contiguous
    w.memory(2 * x.act(key_elements(x)));
    w.memory(2 * x.act(key_elements(x)));
    qk_norm_forward(w, x);
    eager_rope(w, x, query_elements(x));
    eager_rope(w, x, key_elements(x));
  }
  if (x.cp > 1) {  // torch's context_parallel attention (cp_attention.hpp), then wo
    cp_attention_forward(w, x, out);
    const int core = last_step(out);
    if (overlap.on()) {  // wo's chunks start after the core's last step (open_block chains)
      w.input_casts(x.tokens(), x.h, x.query_width() / x.t);
      gemm_reduce_scatter(w, overlap, out, "attn core",
                          {x.tokens(), x.h, x.query_width() / x.t, "attn wo"}, bsh(x));
      if (!compiled) w.memory(3 * hb);  // h = x + attention
      w.close(out, "attn");
      return;
    }
    w.linear(x.tokens(), x.h, x.query_width() / x.t);  // wo
    if (!compiled) w.memory(3 * hb);                    // h = x + attention
    close_block(w, x, "attn", out);
    // The block after the core waits for it (the core's last step may be a transfer).
    for (auto i = static_cast<std::size_t>(core) + 1; i < out.size(); ++i) {
      if (!out[i].is_collective) {
        out[i].after = {core};
        break;
      }
    }
    return;
  }
  attention_core_forward(w, x);
  if (overlap.on()) {
    w.input_casts(x.tokens(), x.h, x.query_width() / x.t);  // wo's (FP8 linears)
    gemm_reduce_scatter(w, overlap, out, "attn core",
                        {x.tokens(), x.h, x.query_width() / x.t, "attn wo"}, bsh(x));
  } else {
    w.linear(x.tokens(), x.h, x.query_width() / x.t);  // wo
  }
  if (!compiled) w.memory(3 * hb);  // h = x + attention
  if (overlap.on()) {
    w.close(out, "attn");
    return;
  }
  close_block(w, x, "attn", out);
}

void torchtitan_mlp_forward(StepWriter& w, const Dims& x, bool compiled,
                            std::vector<LayerStep>& out) {
  const double hb = hidden_bytes(x);
  const double bsf = x.act(x.tokens() * x.f / x.t);
  open_block(x, "mlp", out);
  if (compiled) {
    w.memory(4 * hb);  // h = x + attention, ffn_norm(h): read both, write h and its norm
  } else {
    w.memory(2 * hb);  // ffn_norm
  }
  const TpOverlap overlap = tp_overlap_of(x);
  if (overlap.fuses_all_gather()) {  // fused_all_gather_matmul with w1 and w3 as its two Bs
    all_gather_gemm(w, overlap, out, compiled ? "mlp norm" : "mlp ffn_norm",
                    {x.tokens(), 2 * x.f / x.t, x.h, "mlp w1 w3"}, bsh(x));
  } else {
    w.linear(x.tokens(), x.f / x.t, x.h);  // w1
    w.linear(x.tokens(), x.f / x.t, x.h);  // w3
  }
  if (compiled) {
    w.memory(3 * bsf);  // silu(w1 x) * w3 x
  } else {
    w.memory(2 * bsf);  // silu
    w.memory(3 * bsf);  // mul
  }
  if (overlap.on()) {
    w.input_casts(x.tokens(), x.h, x.f / x.t);  // w2's (FP8 linears)
    gemm_reduce_scatter(w, overlap, out, "mlp act", {x.tokens(), x.h, x.f / x.t, "mlp w2"},
                        bsh(x));
    w.memory(3 * hb);  // out = h + feed_forward
    w.close(out, "mlp");
    return;
  }
  w.linear(x.tokens(), x.h, x.f / x.t);  // w2
  w.memory(3 * hb);                      // out = h + feed_forward
  close_block(w, x, "mlp", out);
}

void torchtitan_mlp_backward(StepWriter& w, const Dims& x, bool compiled,
                             std::vector<LayerStep>& out) {
  const double hb = hidden_bytes(x);
  const double bsf = x.act(x.tokens() * x.f / x.t);
  const TpOverlap overlap = tp_overlap_of(x);
  open_block(x, "mlp bwd", out);
  if (overlap.fuses_all_gather()) {  // w2's dgrad under the chunked all-gather of dY, then wgrad
    all_gather_gemm(w, overlap, out, "mlp bwd start", {x.tokens(), x.f / x.t, x.h, "mlp w2 dgrad"},
                    bsh(x));
    w.linear_wgrad(x.tokens(), x.h, x.f / x.t);
  } else {
    w.linear_backward(x.tokens(), x.h, x.f / x.t);  // w2
  }
  if (compiled) {
    w.memory(5 * bsf);  // read dy, w1 x, w3 x; write d(w1 x), d(w3 x)
  } else {
    w.memory(3 * bsf);  // mul's gradient to silu(w1 x)
    w.memory(3 * bsf);  // mul's gradient to w3 x
    w.memory(3 * bsf);  // silu_backward
  }
  if (overlap.on()) {  // w1's and w3's dgrads with dX's chunked reduce-scatter, then wgrads
    w.gradient_casts(x.tokens(), x.f / x.t, x.h);  // w3's and w1's (FP8 linears)
    w.gradient_casts(x.tokens(), x.f / x.t, x.h);
    column_backward(w, overlap, out, "mlp bwd act", {x.tokens(), 2 * x.f / x.t, x.h, "mlp w1 w3"},
                    bsh(x), bsh(x));
  } else {
    w.linear_backward(x.tokens(), x.f / x.t, x.h);  // w3
    w.linear_backward(x.tokens(), x.f / x.t, x.h);  // w1
  }
  if (compiled) {
    w.memory(5 * hb);  // read both input gradients, h, the residual gradient; write dh
    compiled_norm_weight_grad(w, x, 3);
  } else {
    w.memory(3 * hb);  // the two input gradients summed (autograd's InputBuffer)
    torch_norm_backward(w, hb);
    residual_gradient_add(w, x);
  }
  if (overlap.on()) {
    w.close(out, "mlp bwd");
    return;
  }
  close_block(w, x, "mlp bwd", out);
}

void torchtitan_attention_backward(StepWriter& w, const Dims& x, bool compiled, bool recompute_core,
                                   std::vector<LayerStep>& out) {
  const double hb = hidden_bytes(x);
  const TpOverlap overlap = tp_overlap_of(x);
  open_block(x, "attn bwd", out);
  if (overlap.fuses_all_gather()) {  // wo's dgrad under the chunked all-gather of dY, then wgrad
    all_gather_gemm(w, overlap, out, "attn bwd start",
                    {x.tokens(), x.query_width() / x.t, x.h, "attn wo dgrad"}, bsh(x));
    w.linear_wgrad(x.tokens(), x.h, x.query_width() / x.t);
  } else {
    w.linear_backward(x.tokens(), x.h, x.query_width() / x.t);  // wo
  }
  if (x.cp > 1) {
    cp_attention_backward(w, x, out);
  } else {
    if (recompute_core) attention_core_forward(w, x);
    attention_core_backward(w, x);
  }
  if (compiled) {
    compiled_rope(w, x);
  } else {
    eager_rope(w, x, query_elements(x));
    eager_rope(w, x, key_elements(x));
    if (x.qk_norm != QkNorm::kNone) {
      torch_norm_backward(w, x.act(query_elements(x)));
      torch_norm_backward(w, x.act(key_elements(x)));
    }
    // The split's backward: dq, dk, dv joined into the QKV output's gradient (cat).
    w.memory(2 * x.act(query_elements(x) + 2 * key_elements(x)));
  }
  if (overlap.on()) {  // wqkv's dgrad with dX's chunked reduce-scatter, then its wgrad
    w.gradient_casts(x.tokens(), (x.a + 2 * x.kv) * x.d / x.t, x.h);  // FP8 linears
    column_backward(w, overlap, out, "attn bwd core",
                    {x.tokens(), (x.a + 2 * x.kv) * x.d / x.t, x.h, "attn wqkv"}, bsh(x), bsh(x));
  } else {
    w.linear_backward(x.tokens(), (x.a + 2 * x.kv) * x.d / x.t, x.h);  // wqkv
  }
  if (compiled) {
    w.memory(4 * hb);  // read the norm's gradient, x, the residual gradient; write dx
    compiled_norm_weight_grad(w, x, 2);
  } else {
    torch_norm_backward(w, hb);
    residual_gradient_add(w, x);
  }
  if (overlap.on()) {
    w.close(out, "attn bwd");
    return;
  }
  close_block(w, x, "attn bwd", out);
}

}  // namespace parasim::strat::detail
