#include "strategies/layers/layer_program.hpp"

#include <cmath>
#include <utility>

#include "strategies/layers/attention_core.hpp"
#include "strategies/layers/cp_attention.hpp"
#include "strategies/layers/layer_kernels.hpp"
#include "strategies/layers/low_rank_layer.hpp"
#include "strategies/layers/mla_attention.hpp"
#include "strategies/layers/moe_layer.hpp"
#include "strategies/layers/mtp_module.hpp"
#include "strategies/layers/recompute_steps.hpp"
#include "strategies/layers/step_writer.hpp"
#include "strategies/layers/torchtitan_block.hpp"
#include "strategies/layers/tp_overlap.hpp"
#include "strategies/layers/tsp_layer.hpp"
#include "strategies/layers/tsp_vocab.hpp"

namespace parasim::strat {

cost::CollectivePlan plan_step(const cost::CostModel& costs, const CollectiveStep& step,
                               const cost::GroupPlacement& group) {
  if (step.exchange) return costs.token_exchange(*step.exchange, group);
  return costs.collective(step.kind, step.message, group);
}
namespace {

using namespace detail;
using cost::CollectiveKind;
using cost::Flops;

// Bytes of this rank's QKV output (the QKV GEMM's [tokens x (a + 2 kv) d / t]).
double qkv_bytes(const Dims& x) { return x.act(x.tokens() * (x.a + 2 * x.kv) * x.d / x.t); }

// The query and key norms' backward (their forward: layer_kernels.hpp, qk_norm_forward) as
// apex's norm backward (norm_backward), per tensor.
void qk_norm_backward(StepWriter& w, const Dims& x) {
  if (x.qk_norm == QkNorm::kNone) return;
  for (const double heads : {x.a, x.kv}) {
    norm_backward_of(w, x.act(x.tokens() * heads * x.d / x.t));
  }
}

// Sequence parallelism's all-gather of a linear's input, whole, after the open block (closed as
// `opened`): the FP8 copy where the recipe's library gathers it quantised, `e` bytes per element
// (Dims::gather_e, dy_gather_e), the local shard cast into the open block before it.
void quantized_gather(StepWriter& w, const Dims& x, std::vector<LayerStep>& out,
                      const std::string& opened, const std::string& label, double e) {
  w.close(out, opened);
  StepWriter::collective(out, label, CollectiveKind::kAllGather, x.tokens() * x.h * e);
}

void attention_forward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out) {
  const double bsh = x.act(x.tokens() * x.h);
  const double gathered = x.tokens() * x.h * x.gather_e;  // the AG's message (bsh in 16 bits)
  const double qkv_n = (x.a + 2 * x.kv) * x.d / x.t;
  const TpOverlap overlap = tp_overlap_of(x);  // chunked AG + GEMM, GEMM + RS (tp_overlap.hpp)
  if (x.t > 1 && x.sp && !overlap.fuses_all_gather() && !x.gathers_quantized()) {
    StepWriter::collective(out, "attn all-gather", CollectiveKind::kAllGather, bsh);
  }
  w.memory(2 * hidden_bytes(x));                                   // input norm
  // The recipe's casts: of the local shard before a quantised gather, else of the whole input.
  w.input_casts(x.gathers_quantized() ? x.tokens() / x.t : x.tokens(), qkv_n, x.h);
  if (overlap.fuses_all_gather()) {
    all_gather_gemm(w, overlap, out, "attn norm", {x.tokens(), qkv_n, x.h, "attn qkv"}, gathered);
  } else {
    if (x.gathers_quantized()) {
      quantized_gather(w, x, out, "attn norm", "attn all-gather", x.gather_e);
    }
    w.linear_gemm(x.tokens(), qkv_n, x.h);                         // QKV
  }
  // The QKV linear keeps its bias (skip_bias_add false): in the GEMM's epilogue, or an add.
  if (x.qkv_bias && !x.fusions.linear_bias_in_gemm) w.memory(2 * qkv_bytes(x));
  qk_norm_forward(w, x);
  if (x.cp > 1) {
    cp_attention_forward(w, x, out);
    const int core = last_step(out);
    w.linear(x.tokens(), x.h, x.query_width() / x.t);                // output projection
    bias_dropout_add(w, x);
    w.close(out, "attn proj");
    out.back().after = {core};
    if (x.t > 1) {  // as without cp: sequence parallelism reduce-scatters the projection's output
      StepWriter::collective(out, x.sp ? "attn reduce-scatter" : "attn all-reduce",
                             x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                             bsh);
    }
    return;
  }
  attention_core_forward(w, x);
  if (overlap.on()) {
    w.input_casts(x.tokens(), x.h, x.query_width() / x.t);
    gemm_reduce_scatter(w, overlap, out, "attn core",
                        {x.tokens(), x.h, x.query_width() / x.t, "attn proj"}, bsh);
    bias_dropout_add(w, x);
    w.close(out, "attn");
    return;
  }
  w.linear(x.tokens(), x.h, x.query_width() / x.t);                  // output projection
  bias_dropout_add(w, x);
  w.close(out, "attn");
  if (x.t > 1) {
    StepWriter::collective(out, x.sp ? "attn reduce-scatter" : "attn all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bsh);
  }
}

void mlp_forward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out) {
  const double bsh = x.act(x.tokens() * x.h);
  const double gathered = x.tokens() * x.h * x.gather_e;
  const double fc1_n = (x.swiglu ? 2 : 1) * x.f / x.t;
  const TpOverlap overlap = tp_overlap_of(x);
  if (x.t > 1 && x.sp && !overlap.fuses_all_gather() && !x.gathers_quantized()) {
    StepWriter::collective(out, "mlp all-gather", CollectiveKind::kAllGather, bsh);
  }
  w.memory(2 * hidden_bytes(x));                                   // norm
  w.sync(out, "mlp norm", x.layer_syncs);                          // the framework's syncs
  w.input_casts(x.gathers_quantized() ? x.tokens() / x.t : x.tokens(), fc1_n, x.h);
  if (overlap.fuses_all_gather()) {
    all_gather_gemm(w, overlap, out, "mlp norm", {x.tokens(), fc1_n, x.h, "mlp fc1"}, gathered);
  } else {
    if (x.gathers_quantized()) {
      quantized_gather(w, x, out, "mlp norm", "mlp all-gather", x.gather_e);
    }
    w.linear_gemm(x.tokens(), fc1_n, x.h);                         // fc1 (gate+up)
  }
  mlp_activation(w, x);
  if (overlap.on()) {
    w.input_casts(x.tokens(), x.h, x.f / x.t);
    gemm_reduce_scatter(w, overlap, out, "mlp act", {x.tokens(), x.h, x.f / x.t, "mlp fc2"}, bsh);
    bias_dropout_add(w, x);
    w.close(out, "mlp");
    return;
  }
  w.linear(x.tokens(), x.h, x.f / x.t);                              // fc2
  bias_dropout_add(w, x);
  w.close(out, "mlp");
  if (x.t > 1) {
    StepWriter::collective(out, x.sp ? "mlp reduce-scatter" : "mlp all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bsh);
  }
}

// The backward of a row-parallel linear (the projection, fc2: forward [m x k] x [k x n], m the
// gathered tokens) whose dY sequence parallelism all-gathers: chunked under the dgrad, whole
// before it (quantised: the local dY cast first, Dims::gather_e), or no gather (tp 1, no SP).
// The open block is closed as `opened` where a gather follows it.
void row_parallel_backward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out,
                           const std::string& opened, const std::string& gather,
                           const std::string& linear, double n, double k) {
  const double m = x.tokens();
  const TpOverlap overlap = tp_overlap_of(x);
  w.gradient_casts(x.gathers_quantized() ? m / x.t : m, n, k);  // quantised: dY's local shard
  if (overlap.fuses_all_gather()) {
    all_gather_gemm(w, overlap, out, opened, {m, k, n, linear + " dgrad"}, m * x.h * x.gather_e);
  } else {
    if (x.gathers_quantized()) quantized_gather(w, x, out, opened, gather, x.dy_gather_e);
    w.linear_dgrad(m, n, k);
  }
  w.linear_wgrad(m, n, k);
}

void mlp_backward(StepWriter& w, const Dims& x, std::vector<LayerStep>& out) {
  const double bsh = x.act(x.tokens() * x.h);
  const double bsf = x.act(x.tokens() * x.f / x.t);
  const double fc1_n = (x.swiglu ? 2 : 1) * x.f / x.t;
  const TpOverlap overlap = tp_overlap_of(x);
  if (x.t > 1 && x.sp && !overlap.fuses_all_gather() && !x.gathers_quantized()) {
    StepWriter::collective(out, "mlp bwd all-gather", CollectiveKind::kAllGather, bsh);
  }
  bias_dropout_add_backward(w, x);
  row_parallel_backward(w, x, out, "mlp bwd bda", "mlp bwd all-gather", "mlp fc2", x.h, x.f / x.t);
  w.memory(x.swiglu ? 5 * bsf : 3 * bsf);                          // activation backward
  if (x.bias && !x.swiglu) w.memory(bsf);                          // fc1's bias gradient
  if (overlap.on()) {  // fc1's dgrad and wgrad with dX's reduce-scatter (and bulk's all-gather)
    w.gradient_casts(x.tokens(), fc1_n, x.h);
    column_backward(w, overlap, out, "mlp bwd act", {x.tokens(), fc1_n, x.h, "mlp fc1"}, bsh,
                    x.tokens() * x.h * x.gather_e);
    residual_gradient_add(w, x);
    norm_backward(w, x);
    w.close(out, "mlp bwd");
    return;
  }
  w.linear_backward(x.tokens(), fc1_n, x.h);                       // fc1
  residual_gradient_add(w, x);
  norm_backward(w, x);
  w.close(out, "mlp bwd");
  if (x.t > 1) {
    StepWriter::collective(out, x.sp ? "mlp bwd reduce-scatter" : "mlp bwd all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bsh);
  }
}

void attention_backward(StepWriter& w, const Dims& x, bool recompute_core,
                        std::vector<LayerStep>& out) {
  const double bsh = x.act(x.tokens() * x.h);
  const double qkv_n = (x.a + 2 * x.kv) * x.d / x.t;
  const TpOverlap overlap = tp_overlap_of(x);
  if (x.t > 1 && x.sp && !overlap.fuses_all_gather() && !x.gathers_quantized()) {
    StepWriter::collective(out, "attn bwd all-gather", CollectiveKind::kAllGather, bsh);
  }
  bias_dropout_add_backward(w, x);
  row_parallel_backward(w, x, out, "attn bwd bda", "attn bwd all-gather", "attn proj", x.h,
                        x.query_width() / x.t);
  if (x.cp > 1) {
    cp_attention_backward(w, x, out);
  } else {
    if (recompute_core) attention_core_forward(w, x);
    attention_core_backward(w, x);
  }
  qk_norm_backward(w, x);
  w.memory(2 * qkv_bytes(x));                                       // Q, K, V gradients joined
  if (x.qkv_bias) w.memory(qkv_bytes(x));                           // QKV bias gradient
  if (overlap.on()) {
    w.gradient_casts(x.tokens(), qkv_n, x.h);
    column_backward(w, overlap, out, "attn bwd core", {x.tokens(), qkv_n, x.h, "attn qkv"}, bsh,
                    x.tokens() * x.h * x.gather_e);
    norm_backward(w, x);
    residual_gradient_add(w, x);
    w.close(out, "attn bwd");
    return;
  }
  w.linear_backward(x.tokens(), qkv_n, x.h);                        // QKV
  norm_backward(w, x);
  residual_gradient_add(w, x);
  w.close(out, "attn bwd");
  if (x.t > 1) {
    StepWriter::collective(out, x.sp ? "attn bwd reduce-scatter" : "attn bwd all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bsh);
  }
}

Flops compute_flops(const std::vector<LayerStep>& steps) {
  Flops total;
  for (const auto& s : steps) {
    if (!s.is_collective) total += s.compute.flops;
  }
  return total;
}

// The forward re-run inside a backward (full recompute): labelled, and issued with autograd.
void as_recompute(std::vector<LayerStep>& steps) {
  for (auto& s : steps) {
    if (s.is_collective) s.collective.label = "recompute " + s.collective.label;
    else s.compute.label = "recompute " + s.compute.label;
    s.recompute = true;
  }
}

// Korthikanti's terms up to the MLP (the attention block and the pre-MLP norm's input), as
// cost::activation_bytes_per_layer counts them.
double attention_activation_bytes(const cost::ActivationShape& shape, cost::Recompute kept) {
  double total = 0;
  for (const auto& term : cost::activation_terms_per_layer(shape)) {
    if (!(kept == cost::Recompute::kSelective && term.attention_core)) {
      total += (term.sharded_by_tp || shape.sequence_parallel) ? term.bytes / shape.tp : term.bytes;
    }
    if (term.name == std::string("ln2 input")) break;
  }
  return total;
}

}  // namespace

std::vector<LayerStep> noop_layer_steps(const Scenario& sc, const cost::CostModel& costs) {
  const Dims x = dims_of(sc);
  StepWriter w(costs, sc.training.precision);
  const double elements = x.tokens() * x.h / (x.sp ? x.t : 1.0);
  w.memory(2 * x.act(elements));  // clone: read + write
  std::vector<LayerStep> out;
  w.close(out, "noop layer");
  return out;
}

std::vector<LayerStep> grad_accumulation_steps(const Scenario& sc, const cost::CostModel& costs) {
  const auto policy = sc.training.framework.counts.grad_accumulation;
  std::vector<LayerStep> out;
  if (policy == GradAccumulation::kNone) return out;
  const ModelSpec& m = sc.model;
  const int tp = sc.parallel.tp;
  const int matrices = 4;
  const int tensors = layer_parameter_tensors(m) - (policy == GradAccumulation::kFusedWeights ? matrices : 0);
  const double params = layer_params_per_tp_rank(m, tp) -
                        (policy == GradAccumulation::kFusedWeights
                             ? layer_matrix_params_per_tp_rank(m, tp)
                             : 0.0);
  // Each add reads the accumulated gradient and the new one and writes the sum.
  const double bytes = params * (2 * sc.training.gradient_bytes() +
                                 cost::bytes_per_element(sc.training.precision));
  StepWriter w(costs, sc.training.precision);
  for (int k = 0; k < tensors; ++k) w.memory(bytes / tensors);
  w.close(out, "grad accumulate");
  return out;
}

LayerProgram transformer_layer_program(const Scenario& sc, const cost::CostModel& costs,
                                       LayerKind kind) {
  if (sc.model.low_rank.enabled()) return low_rank_layer_program(sc, costs);
  if (sc.parallel.tp_placement == TpPlacement::kTsp) return tsp_layer_program(sc, costs);
  const Dims x = dims_of(sc);
  const bool moe = kind == LayerKind::kMoe;
  const MoeDims md = moe ? moe_dims_of(sc) : MoeDims{};
  const MlaSpec& mla = sc.model.mla;
  // torchtitan's own block, eager or compiled (torchtitan_block.hpp).
  const bool titan = uses_torchtitan_block(sc, moe);
  const bool compiled = sc.training.framework.compile.compiles_blocks();
  auto attn_fwd = [&](StepWriter& sw, std::vector<LayerStep>& out) {
    if (mla.enabled()) mla_attention_forward(sw, x, mla, out);
    else if (titan) torchtitan_attention_forward(sw, x, compiled, out);
    else attention_forward(sw, x, out);
  };
  // Megatron's mla_up_proj module (selective): MLA's q, k, v rerun before the core's backward.
  const bool recompute_up = sc.training.recompute == cost::Recompute::kSelective &&
                            sc.training.recompute_modules.mla_up_proj;
  auto attn_bwd = [&](StepWriter& sw, bool recompute_core, std::vector<LayerStep>& out) {
    if (mla.enabled()) mla_attention_backward(sw, x, mla, recompute_core, recompute_up, out);
    else if (titan) torchtitan_attention_backward(sw, x, compiled, recompute_core, out);
    else attention_backward(sw, x, recompute_core, out);
  };
  auto mlp_fwd = [&](StepWriter& sw, std::vector<LayerStep>& out) {
    if (moe)
      moe_block_forward(sw, x, md, out);
    else if (titan)
      torchtitan_mlp_forward(sw, x, compiled, out);
    else
      mlp_forward(sw, x, out);
  };
  auto mlp_bwd = [&](StepWriter& sw, std::vector<LayerStep>& out) {
    if (moe)
      moe_block_backward(sw, x, md, out);
    else if (titan)
      torchtitan_mlp_backward(sw, x, compiled, out);
    else
      mlp_backward(sw, x, out);
  };
  StepWriter w(costs, sc.training.precision);
  if (sc.training.fp8.enabled()) w.quantize_linears(linear_quant_of(sc));
  LayerProgram p;
  attn_fwd(w, p.forward);
  mlp_fwd(w, p.forward);
  const auto recompute = sc.training.recompute;
  const cost::RecomputeModules& modules = sc.training.recompute_modules;
  const bool recompute_core = recompute == cost::Recompute::kSelective && modules.core_attn;
  // The forward the backward reruns first: all of it (full), torchtitan's unsaved ops (per-op)
  // or Megatron's norms and MLP modules (selective; recompute_steps.hpp).
  auto rerun = [&](StepWriter& sw, std::vector<LayerStep>& out) {
    if (recompute == cost::Recompute::kFull) out = p.forward;
    if (recompute == cost::Recompute::kPerOp) per_op_recompute(sw, x, out);
    if (recompute == cost::Recompute::kSelective) module_recompute(sw, x, modules, out);
    if (moe && md.recompute_layer) {  // Megatron's "moe" module: the MoE layer's forward
      moe_layer_forward(sw, x, md, out);
      sw.close(out, "moe layer");
    }
    as_recompute(out);
  };
  rerun(w, p.backward);
  mlp_bwd(w, p.backward);
  attn_bwd(w, recompute_core && !x.flash, p.backward);
  // The same backward with the weight gradients split off (zero-bubble B and W).
  {
    StepWriter split(costs, sc.training.precision);
    if (sc.training.fp8.enabled()) split.quantize_linears(linear_quant_of(sc));
    ComputeBlock weights;
    split.set_weight_sink(&weights);
    rerun(split, p.backward_input);
    mlp_bwd(split, p.backward_input);
    attn_bwd(split, recompute_core && !x.flash, p.backward_input);
    weights.label = "wgrad";
    LayerStep step;
    step.compute = weights;
    p.weight_grad.push_back(step);
  }
  p.grad_accumulation = grad_accumulation_steps(sc, costs);
  p.fp8_weights = w.weight_step();
  // Model FLOPs: forward once and backward (twice the forward), recompute excluded. An MoE
  // layer's count its mean rank's tokens (the busiest rank's extra work is time, not model
  // FLOPs).
  const Flops fwd = compute_flops(p.forward);
  p.model_flops = fwd * 3.0;
  if (moe) {
    MoeDims mean = md;
    mean.rank_factor = md.kept_share;
    StepWriter mw(costs, sc.training.precision);
    if (sc.training.fp8.enabled()) mw.quantize_linears(linear_quant_of(sc));
    std::vector<LayerStep> mean_forward;
    attn_fwd(mw, mean_forward);
    moe_block_forward(mw, x, mean, mean_forward);
    p.model_flops = compute_flops(mean_forward) * 3.0;
  }
  const auto shape = activation_shape(sc);
  // FlashAttention stores no s^2 tensors: Korthikanti's selective figure without recomputing.
  const bool flash = sc.training.attention == AttentionKind::kFlash;
  const auto kept = flash && recompute == cost::Recompute::kNone ? cost::Recompute::kSelective
                                                                  : recompute;
  p.activation_stored_bytes = cost::activation_bytes_per_layer(shape, kept).value;
  p.activation_full_bytes =
      cost::activation_bytes_per_layer(shape, flash ? cost::Recompute::kSelective
                                                    : cost::Recompute::kNone)
          .value;
  if (recompute == cost::Recompute::kSelective && !(modules == cost::RecomputeModules{})) {
    cost::RecomputeModules dropped = modules;  // FlashAttention keeps no s^2 terms either way
    dropped.core_attn = modules.core_attn || flash;
    p.activation_stored_bytes = cost::selective_bytes_per_layer(shape, dropped).value;
  }
  if (recompute == cost::Recompute::kPerOp) {  // torchtitan's own tensors, saved and rerun
    p.activation_full_bytes = cost::per_op_sac_backward_bytes(shape).value;
  }
  if (moe) {
    // Korthikanti's attention terms and the pre-MLP norm's input, then the MoE block's own.
    const double block = moe_block_activation_bytes(x, md);
    // What the block's backward reads, its recomputed parts back (moe, moe_act, shared_experts).
    MoeDims all_kept = md;
    all_kept.recompute_layer = all_kept.recompute_act = all_kept.recompute_shared = false;
    const auto full_kept = flash ? cost::Recompute::kSelective : cost::Recompute::kNone;
    p.activation_full_bytes =
        attention_activation_bytes(shape, full_kept) + moe_block_activation_bytes(x, all_kept);
    if (recompute != cost::Recompute::kFull) {
      p.activation_stored_bytes = attention_activation_bytes(shape, kept) + block;
    }
  }
  return p;
}

LayerProgram embedding_program(const Scenario& sc, const cost::CostModel& costs) {
  const Dims x = dims_of(sc);
  if (x.tsp && x.t > 1) return tsp_embedding_program(sc, costs);
  StepWriter w(costs, sc.training.precision);
  LayerProgram p;
  const double bsh = x.act(x.tokens() * x.h);
  const double small = 16 * x.tokens();  // a kernel over the token ids (int64: read + write)
  // Megatron's Embedding.forward (megatron/model/language_model.py): with tp > 1
  // VocabParallelEmbedding masks the ids outside its shard (two compares, or, clone, subtract,
  // index_put: 6 kernels) and zeroes their rows (index_put) around the lookup
  // (mpu/layers.py); then the position lookup and the add, the embedding dropout, and the
  // [b, s, h] -> [s, b, h] transpose(0, 1).contiguous() copy.
  if (x.t > 1) {
    for (int k = 0; k < 6; ++k) w.memory(small);
  }
  w.memory(bsh + x.tokens() * 8);  // gather rows, read token ids
  if (x.t > 1) w.memory(bsh);      // rows of ids outside the shard zeroed
  if (sc.model.learned_positions) {
    w.memory(bsh + x.tokens() * 8);  // position rows
    w.memory(3 * bsh);               // word + position
  }
  if (x.dropout) w.memory(2 * bsh + bsh / x.e);  // embedding dropout, 1-byte mask
  w.memory(2 * bsh);                               // transpose(0, 1).contiguous()
  w.close(p.forward, "embed");
  if (x.t > 1) {  // vocab-parallel embedding: partial rows summed over the TP group
    StepWriter::collective(p.forward, x.sp ? "embed reduce-scatter" : "embed all-reduce",
                           x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce, bsh);
  }
  if (x.t > 1 && x.sp) {
    StepWriter::collective(p.backward, "embed bwd all-gather", CollectiveKind::kAllGather, bsh);
  }
  // Backward: the transpose's and the dropout's, then each table's dense embedding backward
  // (sort-based: sort the ids, count, scatter-add the rows; 4 kernels each [inference from
  // aten/src/ATen/native/cuda/Embedding.cu, embedding_dense_backward_cuda]).
  w.memory(2 * bsh);
  if (x.dropout) w.memory(3 * bsh);
  const int tables = sc.model.learned_positions ? 2 : 1;
  for (int t = 0; t < tables; ++t) {
    for (int k = 0; k < 3; ++k) w.memory(small);
    w.memory(2 * bsh);  // scatter-add of row gradients
  }
  w.close(p.backward, "embed bwd");
  // The embedding has no input gradient: with a B/W split its whole backward is W.
  for (const auto& s : p.backward) (s.is_collective ? p.backward_input : p.weight_grad).push_back(s);
  return p;
}

namespace {

LayerProgram vocab_head_program(const Scenario& sc, const cost::CostModel& costs) {
  const Dims x = dims_of(sc);
  if (x.tsp && x.t > 1) return tsp_head_program(sc, costs);
  StepWriter w(costs, sc.training.precision);
  LayerProgram p;
  const double bsh = x.act(x.tokens() * x.h);
  // Vocab-parallel: each rank holds ceil(V/t) rows (Megatron pads the vocabulary).
  const double vocab_rows = std::ceil(x.v / x.t);
  const double logits = x.tokens() * vocab_rows;
  const double small = 16 * x.tokens();  // a kernel over one value per token
  const double per_token = 4 * x.tokens();  // fp32, one value per token (a collective's bytes)
  if (x.t > 1 && x.sp) StepWriter::collective(p.forward, "head all-gather", CollectiveKind::kAllGather, bsh);
  w.memory(2 * hidden_bytes(x));                 // final norm
  w.gemm(x.tokens(), vocab_rows, x.h);           // logits, vocab-parallel
  // The loss: output.float() (fp16_lm_cross_entropy is off by default), then
  // _VocabParallelCrossEntropy.forward (megatron/mpu/cross_entropy.py @de7dc40f88, the same in
  // core/tensor_parallel/cross_entropy.py @23.04): max over the vocabulary, its all-reduce,
  // sub_ of the max, the target mask and the predicted logits (10 kernels over the tokens), their
  // all-reduce, exp in place, the sum, its all-reduce, log and subtract, div_ by the sum (kept
  // as the softmax for the backward); then the loss mask's multiply, sums and divide.
  w.memory((x.e + 4) * logits);                  // .float()
  w.memory(4 * logits);                          // max
  auto tp_all_reduce = [&](const char* label) {
    if (x.t > 1) StepWriter::collective(p.forward, label, CollectiveKind::kAllReduce, per_token);
  };
  w.close(p.forward, "head");
  tp_all_reduce("loss max all-reduce");
  w.memory(8 * logits);                          // sub_
  for (int k = 0; k < 10; ++k) w.memory(small);  // mask, masked target, gather, clone, zeroing
  w.close(p.forward, "loss target");
  tp_all_reduce("loss target all-reduce");
  w.memory(8 * logits);                          // exp
  w.memory(4 * logits);                          // sum
  w.close(p.forward, "loss exp");
  tp_all_reduce("loss sum all-reduce");
  w.memory(small);                               // log
  w.memory(small);                               // - predicted logit
  w.memory(8 * logits);                          // div_: the softmax
  for (int k = 0; k < 4; ++k) w.memory(small);   // loss mask: multiply, sums, divide
  w.close(p.forward, "loss");
  auto backward = [&](StepWriter& bw, std::vector<LayerStep>& out) {
    // The loss mask's backward (2 kernels); _VocabParallelCrossEntropy.backward: arange, the
    // target mask as float, 1 - it, the indexed subtract (index, sub, index_put), mul_ by the
    // incoming gradient over the whole softmax; the .float()'s backward casts back.
    for (int k = 0; k < 2; ++k) bw.memory(small);
    for (int k = 0; k < 6; ++k) bw.memory(small);
    bw.memory(8 * logits + small);                 // mul_
    bw.memory((4 + x.e) * logits);                 // cast to the training precision
    bw.gemm_backward(x.tokens(), vocab_rows, x.h);
    norm_backward(bw, x);
    bw.close(out, "head bwd");
    if (x.t > 1) {
      StepWriter::collective(out, x.sp ? "head bwd reduce-scatter" : "head bwd all-reduce",
                             x.sp ? CollectiveKind::kReduceScatter : CollectiveKind::kAllReduce,
                             bsh);
    }
  };
  backward(w, p.backward);
  StepWriter split(costs, sc.training.precision);
  ComputeBlock weights;
  split.set_weight_sink(&weights);
  backward(split, p.backward_input);
  weights.label = "head wgrad";
  LayerStep step;
  step.compute = weights;
  p.weight_grad.push_back(step);
  p.model_flops = cost::Flops{2.0 * x.tokens() * x.v * x.h / x.t * 3.0};  // unpadded V
  return p;
}

}  // namespace

LayerProgram head_program(const Scenario& sc, const cost::CostModel& costs) {
  LayerProgram p = vocab_head_program(sc, costs);
  // What the head keeps for its backward: the logits in the training precision and the loss's
  // fp32 softmax (vocab-parallel: V / t per token).
  const double tokens =
      static_cast<double>(sc.training.micro_batch) * sc.model.seq_len / sc.parallel.cp;
  const double logit_elements = tokens * sc.model.vocab / sc.parallel.tp;
  p.activation_stored_bytes = p.activation_full_bytes =
      logit_elements * (cost::bytes_per_element(sc.training.precision) + 4.0);
  detail::append_mtp_modules(sc, costs, p);
  return p;
}

cost::ActivationShape activation_shape(const Scenario& sc) {
  cost::ActivationShape a;
  a.seq_len = static_cast<double>(sc.model.seq_len) / sc.parallel.cp;  // this rank's tokens
  a.micro_batch = sc.training.micro_batch;
  a.hidden = sc.model.hidden;
  a.heads = sc.model.heads;
  a.kv_heads = sc.model.kv_heads;
  a.query_width = sc.model.query_width();
  if (sc.model.mla.enabled()) {
    // MLA (mla_attention.hpp): a heads of K and V at the mean head width, for Korthikanti's
    // q, k, v and projection-input terms.
    const auto& mla = sc.model.mla;
    a.kv_heads = sc.model.heads;
    a.query_width = sc.model.heads *
                    (mla.qk_nope_head_dim + mla.qk_rope_head_dim + mla.v_head_dim) / 2.0;
  }
  a.ffn_hidden = sc.model.ffn_hidden;
  a.swiglu = sc.model.mlp == MlpKind::kSwiglu;
  a.dropout = sc.model.dropout;
  a.tp = sc.parallel.tp;
  a.sequence_parallel = sc.parallel.sequence_parallel;
  if (sc.training.fp8.enabled()) {
    a.linear_input_bytes = cost::saved_linear_input_bytes(sc.training.fp8.recipe);
    a.attention_keeps_output = sc.training.attention == AttentionKind::kFlash;
    a.scaled_mm_linears = cost::quant_recipe_info(sc.training.fp8.recipe).library ==
                          cost::QuantLibrary::kTorchao;
  }
  return a;
}

}  // namespace parasim::strat
