#include "strategies/layers/recompute_steps.hpp"

#include "strategies/layers/layer_kernels.hpp"

namespace parasim::strat::detail {
namespace {

using cost::CollectiveKind;

// The all-reduce after a row-parallel linear without SP: not in torchtitan's save list.
void rerun_all_reduce(std::vector<LayerStep>& out, const Dims& x, const char* label) {
  if (x.t > 1 && !x.sp) {
    StepWriter::collective(out, label, CollectiveKind::kAllReduce, x.act(x.tokens() * x.h));
  }
}

void rerun_all_gather(std::vector<LayerStep>& out, const Dims& x, const char* label) {
  if (x.t > 1 && x.sp) {
    StepWriter::collective(out, label, CollectiveKind::kAllGather, x.act(x.tokens() * x.h));
  }
}

}  // namespace

void per_op_recompute(StepWriter& w, const Dims& x, std::vector<LayerStep>& out) {
  // Attention: mm 1 (wq) and mm 3 (wv) saved, mm 2 (wk) and mm 4 (wo) rerun; SDPA saved. With
  // torchao's float8 (every linear an aten._scaled_mm, saved and not counted:
  // activation_checkpointing.hpp) no GEMM reruns, nor the casts feeding them (torchao's costs
  // assume torch.compile, whose partitioner reruns only what the backward reads).
  const bool rerun_mms = !w.quantized();
  rerun_all_gather(out, x, "attn all-gather");
  w.memory(2 * hidden_bytes(x));                // input norm
  if (rerun_mms) w.linear(x.tokens(), x.kv * x.d / x.t, x.h);  // wk
  qk_norm_forward(w, x);
  if (rerun_mms) w.linear(x.tokens(), x.h, x.query_width() / x.t);  // wo
  bias_dropout_add(w, x);                            // the residual add
  w.close(out, "attn");
  rerun_all_reduce(out, x, "attn all-reduce");  // with SP the reduce-scatter is saved
  // MLP: SwiGLU's w1 (mm 5) and w2 (mm 7) saved, w3 (mm 6) rerun; GeLU's fc1 (mm 5) saved, fc2
  // (mm 6) rerun.
  rerun_all_gather(out, x, "mlp all-gather");
  w.memory(2 * hidden_bytes(x));  // norm
  w.sync(out, "mlp norm", x.layer_syncs);
  if (x.swiglu) {
    if (rerun_mms) w.linear(x.tokens(), x.f / x.t, x.h);  // w3
    mlp_activation(w, x);
  } else {
    mlp_activation(w, x);
    if (rerun_mms) w.linear(x.tokens(), x.h, x.f / x.t);  // fc2
  }
  bias_dropout_add(w, x);
  w.close(out, "mlp");
  rerun_all_reduce(out, x, "mlp all-reduce");
}

void module_recompute(StepWriter& w, const Dims& x, const cost::RecomputeModules& modules,
                      std::vector<LayerStep>& out) {
  if (modules.layernorm) {
    w.memory(2 * hidden_bytes(x));  // input_layernorm
    w.memory(2 * hidden_bytes(x));  // pre_mlp_layernorm
    w.close(out, "norms");
  }
  if (!modules.mlp) return;
  rerun_all_gather(out, x, "mlp all-gather");
  w.linear(x.tokens(), (x.swiglu ? 2 : 1) * x.f / x.t, x.h);  // fc1 (gate+up)
  mlp_activation(w, x);
  w.linear(x.tokens(), x.h, x.f / x.t);  // fc2
  w.close(out, "mlp");
  if (x.t > 1) {
    StepWriter::collective(out, x.sp ? "mlp reduce-scatter" : "mlp all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                           x.act(x.tokens() * x.h));
  }
}

}  // namespace parasim::strat::detail
