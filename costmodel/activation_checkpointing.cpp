#include "costmodel/activation_checkpointing.hpp"

#include <stdexcept>
#include <string_view>

namespace parasim::cost {
namespace {

constexpr double kBf16 = 2;  // bytes per 16-bit activation
constexpr double kFp32 = 4;  // FlashAttention's logsumexp

bool in(std::string_view name, std::initializer_list<std::string_view> names) {
  for (auto n : names) {
    if (n == name) return true;
  }
  return false;
}

double per_gpu(const SacTerm& term, const ActivationShape& x) {
  switch (term.split) {
    case SacSplit::kTensorParallel:
      return term.bytes / x.tp;
    case SacSplit::kSequence:
      return x.sequence_parallel ? term.bytes / x.tp : term.bytes;
    case SacSplit::kWhole:
      return term.bytes;
  }
  return term.bytes;
}

}  // namespace

Bytes selective_bytes_per_layer(const ActivationShape& x, const RecomputeModules& modules) {
  double total = 0;
  for (const auto& term : activation_terms_per_layer(x)) {
    const std::string_view name = term.name;
    if (modules.core_attn && term.attention_core) continue;
    if (modules.layernorm && in(name, {"qkv input", "fc1 input"})) continue;
    if (modules.mla_up_proj && in(name, {"q", "k", "v"})) continue;
    if (modules.mlp &&
        in(name, {"gate output", "up output", "down input", "gelu input", "fc2 input"})) {
      continue;
    }
    total += (term.sharded_by_tp || x.sequence_parallel) ? term.bytes / x.tp : term.bytes;
  }
  return {total};
}

std::vector<SacTerm> per_op_sac_terms(const ActivationShape& x) {
  if (x.dropout || x.linear_input_bytes != kBf16) {
    throw std::invalid_argument(
        "per-op checkpointing: modelled without dropout and Transformer Engine's FP8 linears");
  }
  activation_terms_per_layer(x);  // the shape's own checks
  const double tokens = x.seq_len * x.micro_batch;
  const double sbh = tokens * x.hidden;
  const double sbq = tokens * (x.query_width > 0 ? x.query_width : x.hidden);
  const double sbkv = sbq * x.kv_heads / x.heads;
  const double sbf = tokens * x.ffn_hidden;
  const bool rs = x.tp > 1 && x.sequence_parallel;  // reduce-scatter outputs exist
  constexpr bool kSaved = true, kRecomputed = false;
  // torchao's float8: every linear runs aten._scaled_mm, in functorch's compute-intensive ops
  // (the save list) but not among the mms the policy counts (aten.mm, aten.linear), so every
  // linear's output is saved; the casts' amax (aten.max) too, a scalar (rowwise: a row's fp32,
  // 4 bytes per token and operand: left out).
  const bool all_mms = x.scaled_mm_linears;
  using S = SacSplit;
  std::vector<SacTerm> t;
  // Attention: mm 1 wq saved, mm 2 wk recomputed, mm 3 wv saved, mm 4 wo recomputed.
  t.push_back({"block input", kBf16 * sbh, S::kSequence, kSaved});
  // The norm's output as the linears read it: all-gathered (whole) under sequence parallelism.
  t.push_back({"norm 1 output", kBf16 * sbh, S::kWhole, kRecomputed});
  t.push_back({"wq output", kBf16 * sbq, S::kTensorParallel, kSaved});
  if (all_mms) t.push_back({"wk output", kBf16 * sbkv, S::kTensorParallel, kSaved});
  t.push_back({"wv output", kBf16 * sbkv, S::kTensorParallel, kSaved});
  t.push_back({"q after rope", kBf16 * sbq, S::kTensorParallel, kRecomputed});
  t.push_back({"k after rope", kBf16 * sbkv, S::kTensorParallel, kRecomputed});
  t.push_back({"sdpa output", kBf16 * sbq, S::kTensorParallel, kSaved});
  t.push_back({"sdpa logsumexp", kFp32 * x.heads * tokens, S::kTensorParallel, kSaved});
  // inner_attention(...).contiguous(): wo's input, a copy of the SDPA output.
  t.push_back({"wo input", kBf16 * sbq, S::kTensorParallel, kRecomputed});
  // wo's output: TP-partial [s, b, h] before its reduction.
  if (all_mms) t.push_back({"wo output", kBf16 * sbh, S::kWhole, kSaved});
  if (rs) t.push_back({"attn reduce-scatter output", kBf16 * sbh, S::kSequence, kSaved});
  // MLP: mms 5, 6 (, 7).
  t.push_back({"norm 2 input", kBf16 * sbh, S::kSequence, kRecomputed});
  t.push_back({"norm 2 output", kBf16 * sbh, S::kWhole, kRecomputed});
  if (x.swiglu) {
    t.push_back({"w1 output", kBf16 * sbf, S::kTensorParallel, kSaved});
    t.push_back({"silu output", kBf16 * sbf, S::kTensorParallel, kRecomputed});
    t.push_back({"w3 output", kBf16 * sbf, S::kTensorParallel, all_mms ? kSaved : kRecomputed});
    t.push_back({"swiglu product", kBf16 * sbf, S::kTensorParallel, kRecomputed});
    t.push_back({"w2 output", kBf16 * sbh, S::kWhole, kSaved});
  } else {
    t.push_back({"fc1 output", kBf16 * sbf, S::kTensorParallel, kSaved});
    t.push_back({"gelu output", kBf16 * sbf, S::kTensorParallel, kRecomputed});
    if (all_mms) t.push_back({"fc2 output", kBf16 * sbh, S::kWhole, kSaved});
  }
  if (rs) t.push_back({"mlp reduce-scatter output", kBf16 * sbh, S::kSequence, kSaved});
  return t;
}

Bytes per_op_sac_saved_bytes(const ActivationShape& x) {
  double total = 0;
  for (const auto& term : per_op_sac_terms(x)) {
    if (term.saved) total += per_gpu(term, x);
  }
  return {total};
}

Bytes per_op_sac_backward_bytes(const ActivationShape& x) {
  double total = 0;
  for (const auto& term : per_op_sac_terms(x)) total += per_gpu(term, x);
  return {total};
}

}  // namespace parasim::cost
