#pragma once
// Internal to strategies/: the helper that turns kernels into layer steps (compute blocks and
// collectives) and the dimensions of a layer. The attention core is in attention_core.hpp. Not a
// public header.

#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/attention_cost.hpp"
#include "costmodel/cost_model.hpp"
#include "costmodel/precision/quantization.hpp"
#include "strategies/framework/host_plan.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/layers/layer_program.hpp"

namespace parasim::strat::detail {

using cost::Bytes;
using cost::CollectiveKind;
using cost::GemmShape;

// How a writer quantises linear layers (StepWriter::quantize_linears).
struct LinearQuant {
  cost::QuantRecipe recipe = cost::QuantRecipe::kNone;
  cost::Architecture architecture = cost::Architecture::kUnknown;
  double gemm_rate = 1;     // cost::quant_gemm_rate
  bool fp8_params = false;  // training.fp8.param_gather
};
inline LinearQuant linear_quant_of(const Scenario& sc) {
  const auto arch = sc.cluster.device.architecture;
  return LinearQuant{sc.training.fp8.recipe, arch,
                     cost::quant_gemm_rate(sc.training.fp8.recipe, arch),
                     sc.training.fp8.param_gather};
}

// Accumulates kernels into the current compute block; collectives and syncs close the block.
// A kernel occupies the GPU for its body plus the GPU-side gap between queued kernels
// (queued_kernel_gap, host_plan.hpp); its launch is the host's (FrameworkSpec), never counted on
// the GPU as well. The block keeps its last kernel's GPU time (ComputeBlock::last_body) for the
// host-issue bound (sim/workload.hpp, set_issue).
class StepWriter {
 public:
  StepWriter(const cost::CostModel& costs, cost::Dtype dtype) : costs_(costs), dtype_(dtype) {}

  // Dimensions are whole numbers carried as double (the scenario parser checks that tp divides
  // heads, kv_heads, hidden and ffn_hidden; the vocabulary is padded to ceil(V/t) where used).
  // `slowdown` (>= 1): the GEMM launched on a share of the SMs (tp_overlap.hpp), its body x it.
  void gemm(double m, double n, double k, double batch = 1, double slowdown = 1) {
    GemmShape shape{std::llround(m), std::llround(n), std::llround(k), std::llround(batch), dtype_};
    const sim::Time body = costs_.gemm_body(shape);
    kernel(slowdown == 1 ? body
                         : sim::Time::ps_rounded(static_cast<double>(body.picoseconds()) * slowdown));
    block_.flops += shape.flops();
  }
  // The weight-gradient GEMM dW = X^T dY of a forward GEMM [m x k] x [k x n], into the weight
  // sink when there is one (zero-bubble's B/W split).
  void weight_gemm(double m, double n, double k, double slowdown = 1) {
    if (weight_sink_ != nullptr) std::swap(block_, *weight_sink_);
    gemm(k, n, m, 1, slowdown);
    if (weight_sink_ != nullptr) std::swap(block_, *weight_sink_);
  }
  // The two backward GEMMs of a forward GEMM [m x k] x [k x n]: dX = dY W^T and dW = X^T dY.
  // With a weight sink (zero-bubble's B/W split) dW goes there instead of into the block.
  void gemm_backward(double m, double n, double k, double batch = 1) {
    gemm(m, k, n, batch);
    if (weight_sink_ == nullptr) {
      gemm(k, n, m, batch);
      return;
    }
    std::swap(block_, *weight_sink_);
    gemm(k, n, m, batch);
    std::swap(block_, *weight_sink_);
  }
  // Backward of a product of two activations (attention scores): both gradients are input
  // gradients, never weight gradients.
  void activation_gemm_backward(double m, double n, double k, double batch) {
    gemm(m, k, n, batch);
    gemm(k, n, m, batch);
  }
  void set_weight_sink(ComputeBlock* sink) { weight_sink_ = sink; }

  // FP8 linears (training.fp8): from here on linear() and linear_backward() quantise their
  // operands with the recipe's kernels (costmodel/precision/quantization.hpp) and run FP8 GEMMs
  // at the device's fp8 rate times the recipe's GEMM rate.
  void quantize_linears(const LinearQuant& q) { quant_ = q; }
  // A linear layer's forward GEMM [m x k] x [k x n] (`batch` of them: a grouped GEMM).
  void linear(double m, double n, double k, double batch = 1) {
    input_casts(m, n, k, batch);
    linear_gemm(m, n, k, batch);
  }
  // Its parts, for callers that place them apart (tp_overlap.hpp chunks the GEMM; an FP8
  // all-gather casts before the gather): the recipe's forward kernels (none unquantised), and
  // the GEMM, FP8 when quantised, `slowdown` as gemm()'s.
  void input_casts(double m, double n, double k, double batch = 1) {
    if (!quant_) return;
    for (double bytes : kernels_of(m, n, k, batch).forward) quantization_kernel(bytes);
  }
  void linear_gemm(double m, double n, double k, double batch = 1, double slowdown = 1) {
    if (!quant_) {
      gemm(m, n, k, batch, slowdown);
      return;
    }
    quantized_gemm(m, n, k, batch, slowdown);
  }
  // Its backward: the recipe's kernels, then dgrad and wgrad in FP8 (wgrad to the weight sink
  // when there is one). Each call also counts the weight's once-a-step casts (weight_step()).
  void linear_backward(double m, double n, double k, double batch = 1) {
    gradient_casts(m, n, k, batch);
    linear_dgrad(m, n, k, batch);
    linear_wgrad(m, n, k, batch);
  }
  // Its parts: the recipe's backward kernels (the output gradient's casts); dX = dY W^T; dW =
  // X^T dY (to the weight sink when there is one), which also counts the weight's once-a-step
  // casts. Call each once per linear.
  void gradient_casts(double m, double n, double k, double batch = 1) {
    if (!quant_) return;
    for (double bytes : kernels_of(m, n, k, batch).backward) quantization_kernel(bytes);
  }
  void linear_dgrad(double m, double n, double k, double batch = 1, double slowdown = 1) {
    linear_gemm(m, k, n, batch, slowdown);
  }
  void linear_wgrad(double m, double n, double k, double batch = 1, double slowdown = 1) {
    if (weight_sink_ != nullptr) std::swap(block_, *weight_sink_);
    linear_gemm(k, n, m, batch, slowdown);
    if (weight_sink_ != nullptr) std::swap(block_, *weight_sink_);
    if (!quant_) return;
    for (double bytes : kernels_of(m, n, k, batch).per_step) {
      weight_step_.time +=
          costs_.memory_bound_body(Bytes{bytes}) + queued_kernel_gap(costs_.device());
      ++weight_step_.kernels;
    }
    (experts_ ? weight_step_.expert_elements : weight_step_.elements) += n * k * batch;
  }
  // Whether linears are quantised (quantize_linears()).
  bool quantized() const { return quant_.has_value(); }
  // Whether the linears that follow are experts' (their weights reduce over edp, not dp).
  void count_weights_as_experts(bool experts) { experts_ = experts; }
  // The FP8 weight casts the linears seen by linear_backward() add once a step.
  const QuantizedWeightStep& weight_step() const { return weight_step_; }
  // One FlashAttention kernel (costmodel/attention_cost.hpp): the time the device's measured
  // efficiency table gives the FLOPs the FlashAttention papers count, plus one launch.
  void flash_attention(cost::AttentionShape shape, cost::FlashPass pass) {
    shape.dtype = dtype_;
    kernel(cost::flash_attention_time(shape, pass, costs_.device()));
    block_.flops += cost::flash_attention_flops(shape, pass);
  }
  // Several GEMMs issued as one kernel (grouped / batched GEMM): their model times add, the
  // kernel and its launch count once (BOOST's linear-layer grouping).
  void gemm_group(const std::vector<std::array<double, 3>>& shapes) {
    sim::Time body;
    for (const auto& s : shapes) {
      GemmShape shape{std::llround(s[0]), std::llround(s[1]), std::llround(s[2]), 1, dtype_};
      body += costs_.gemm_body(shape);
      block_.flops += shape.flops();
    }
    kernel(body);
  }
  // One memory-bound kernel moving `bytes` (reads plus writes).
  void memory(double bytes) { kernel(costs_.memory_bound_body(Bytes{bytes})); }
  void close(std::vector<LayerStep>& out, const std::string& label) {
    if (block_.kernels == 0) return;
    block_.label = label;
    LayerStep step;
    step.compute = std::move(block_);
    out.push_back(std::move(step));
    block_ = ComputeBlock{};
  }
  // `count` host syncs here (FrameworkCounts::layer_syncs): the block so far is closed as
  // `label`, and the host waits for it (and everything before) before issuing what follows.
  // With nothing before in `out`, an empty step carries the syncs.
  void sync(std::vector<LayerStep>& out, const std::string& label, int count) {
    if (count <= 0) return;
    close(out, label);
    if (out.empty()) {
      out.push_back(LayerStep{});
      out.back().compute.label = label;
    }
    out.back().syncs_after += count;
  }
  static void collective(std::vector<LayerStep>& out, std::string label, CollectiveKind kind,
                         double bytes) {
    LayerStep step;
    step.is_collective = true;
    step.collective = CollectiveStep{std::move(label), kind, Bytes{bytes}, std::nullopt};
    out.push_back(std::move(step));
  }

 private:
  void kernel(sim::Time body) {
    const sim::Time gpu = body + queued_kernel_gap(costs_.device());
    block_.time += gpu;
    block_.last_body = gpu;
    ++block_.kernels;
  }

  cost::LinearQuantKernels kernels_of(double m, double n, double k, double batch) const {
    return cost::linear_quant_kernels(quant_->recipe, quant_->architecture, m, n, k, batch,
                                      quant_->fp8_params);
  }
  void quantization_kernel(double bytes) {
    const sim::Time before = block_.time;
    memory(bytes);
    weight_step_.micro_batch_kernels += block_.time - before;
  }
  void quantized_gemm(double m, double n, double k, double batch, double slowdown = 1) {
    GemmShape shape{std::llround(m), std::llround(n), std::llround(k), std::llround(batch),
                    cost::Dtype::kFp8};
    const sim::Time body = costs_.gemm_body(shape);
    kernel(sim::Time::ps_rounded(static_cast<double>(body.picoseconds()) * slowdown /
                                 quant_->gemm_rate));
    block_.flops += shape.flops();
  }

  const cost::CostModel& costs_;
  cost::Dtype dtype_;
  ComputeBlock block_;
  ComputeBlock* weight_sink_ = nullptr;
  std::optional<LinearQuant> quant_;
  QuantizedWeightStep weight_step_;
  bool experts_ = false;
};

// Steps that name what they wait for (LayerStep::after holds indices into the same list).
inline int last_step(const std::vector<LayerStep>& out) { return static_cast<int>(out.size()) - 1; }

// A collective over `group` (and so on its stream) after the steps `after`.
inline void collective_after(std::vector<LayerStep>& out, std::string label, CollectiveKind kind,
                             double bytes, StepGroup group, std::vector<int> after) {
  StepWriter::collective(out, std::move(label), kind, bytes);
  out.back().group = group;
  out.back().after = std::move(after);
}

// Closes the writer's compute block as a step after the steps `after`.
inline void close_after(StepWriter& w, std::vector<LayerStep>& out, const std::string& label,
                        std::vector<int> after) {
  const std::size_t before = out.size();
  w.close(out, label);
  if (out.size() > before) out.back().after = std::move(after);  // an empty block adds no step
}

struct Dims {
  double b, s, h, a, kv, d, f, t, v;
  double e;    // bytes per activation element
  bool sp;
  bool swiglu;
  bool dropout;
  bool flash = false;  // FlashAttention core (Dao et al. 2022, arXiv 2205.14135), causal
  double cp = 1;       // context-parallel ranks; s is then this rank's share, s_total / cp
  bool tsp = false;    // TSP: tokens are local (s / D); tsp_layer and tsp_vocab take over
  CpComm cp_comm = CpComm::kRing;
  double cp_a2a = 1;  // a2a+p2p: the all-to-all group's size (cp / cp_a2a ranks on the ring)
  bool bias = false;            // linear biases (GPT)
  bool qkv_bias = false;        // a bias on the QKV projection (GPT, Qwen2.5)
  KernelFusions fusions;        // the framework's (training.framework)
  int layer_syncs = 0;          // the framework's syncs per layer forward, before the MLP
  QkNorm qk_norm = QkNorm::kNone;  // norms of the queries and keys after QKV (Qwen3, OLMoE)
  // Bytes per element a linear keeps of its input for wgrad (2; FP8: cost::
  // saved_linear_input_bytes).
  double linear_input_bytes = 2;
  TpCommOverlap tp_overlap = TpCommOverlap::kNone;  // parallel.tp_comm_overlap (tp_overlap.hpp)
  int sm_count = 0;                                 // the device's SMs (0: unknown)
  bool fp8_linears = false;                         // training.fp8: the linears are quantised
  // Bytes per element of a linear input sequence parallelism all-gathers (the norm's output
  // before QKV and fc1; dY before the projection's and fc2's dgrad; the input wgrad gathers):
  // e, or 1 + s where the FP8 recipe's library quantises the local shard and gathers the FP8
  // copy: Transformer Engine's gather_along_first_dim and userbuffers take the quantizer
  // (module/layernorm_linear.py forward, module/base.py grad_output_preprocess and
  // fill_userbuffers_buffer_for_all_gather, TE @ d0067d0d), row-wise data and its scales (s per
  // element, cost::QuantRecipeInfo). torchao's Float8Linear as torchtitan 0.3.0 shards it casts
  // after a 16-bit gather. Multi-head latent attention's and the MoE block's gathers stay e.
  double gather_e = 2;
  // The same for dY before a row-parallel dgrad without userbuffers: TE asks for the row-wise
  // and the column-wise copy (module/linear.py backward, set_usage(rowwise=True,
  // columnwise=True)); a per-tensor copy is gathered row-wise and transposed after
  // (_all_gather_fp8), the block-scaled ones gather both (_all_gather_mxfp8,
  // _start_all_gather_fp8_blockwise): 2 (1 + s). Userbuffers drops the column-wise one.
  double dy_gather_e = 2;
  bool gathers_quantized() const { return gather_e != e; }
  double tokens() const { return b * s; }
  double query_width() const { return a * d; }  // h unless the head width is set
  double act(double elements) const { return elements * e; }
};

inline Dims dims_of(const Scenario& sc) {
  const auto& m = sc.model;
  Dims x{};
  x.b = sc.training.micro_batch;
  // Tokens of this rank: context parallelism splits the sequence over cp, TSP over its D = tp.
  x.s = static_cast<double>(m.seq_len) / sc.parallel.cp /
        (sc.parallel.tp_placement == TpPlacement::kTsp ? sc.parallel.tp : 1);
  x.tsp = sc.parallel.tp_placement == TpPlacement::kTsp;
  x.cp = sc.parallel.cp;
  x.cp_comm = sc.parallel.cp_comm;
  x.cp_a2a = sc.parallel.cp_comm == CpComm::kAllToAllP2p ? sc.parallel.cp_a2a_size : 1;
  x.h = m.hidden;
  x.a = m.heads;
  x.kv = m.kv_heads;
  x.d = m.head_dim();
  x.f = m.ffn_hidden;
  x.t = sc.parallel.tp;
  x.v = m.vocab;
  x.e = cost::bytes_per_element(sc.training.precision);
  x.sp = sc.parallel.sequence_parallel;
  x.swiglu = m.mlp == MlpKind::kSwiglu;
  x.dropout = m.dropout;
  x.flash = sc.training.attention == AttentionKind::kFlash;
  x.bias = m.linear_bias;
  x.qkv_bias = m.linear_bias || m.qkv_bias;
  x.fusions = sc.training.framework.fusions;
  x.layer_syncs = sc.training.framework.counts.layer_syncs;
  x.qk_norm = m.qk_norm;
  x.tp_overlap = sc.parallel.tp_comm_overlap;
  x.sm_count = sc.cluster.device.sm_count;
  x.fp8_linears = sc.training.fp8.enabled();
  x.gather_e = x.e;
  if (x.fp8_linears && x.sp && x.t > 1 && !x.tsp) {
    const cost::QuantRecipeInfo info = cost::quant_recipe_info(sc.training.fp8.recipe);
    if (info.library == cost::QuantLibrary::kTransformerEngine) {
      x.gather_e = 1 + info.scale_bytes_per_element;
    }
  }
  x.dy_gather_e = x.gathers_quantized() && !cost::quant_recipe_info(sc.training.fp8.recipe)
                                               .per_tensor
                      ? 2 * x.gather_e
                      : x.gather_e;
  x.linear_input_bytes = sc.training.fp8.enabled()
                             ? cost::saved_linear_input_bytes(sc.training.fp8.recipe)
                             : x.e;
  return x;
}

}  // namespace parasim::strat::detail
