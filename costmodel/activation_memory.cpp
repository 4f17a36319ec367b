#include "costmodel/activation_memory.hpp"

#include <stdexcept>

#include "costmodel/activation_checkpointing.hpp"

namespace parasim::cost {

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
    case Recompute::kPerOp:
      return "per-op";
  }
  return "?";
}

namespace {

constexpr double kActivationBytes = 2;  // 16-bit activations
constexpr double kMaskBytes = 1;        // dropout masks

void check(const ActivationShape& x) {
  if (!(x.seq_len > 0 && x.micro_batch > 0 && x.hidden > 0 && x.heads > 0 && x.kv_heads > 0 &&
        x.ffn_hidden > 0) ||
      x.tp < 1) {
    throw std::invalid_argument("activation shape: sizes must be positive and tp >= 1");
  }
}

}  // namespace

std::vector<ActivationTerm> activation_terms_per_layer(const ActivationShape& x) {
  check(x);
  const double sbh = x.seq_len * x.micro_batch * x.hidden;
  // Q, K, V and the output projection's input are a d wide (h unless the head width is set).
  const double sbq = x.seq_len * x.micro_batch * (x.query_width > 0 ? x.query_width : x.hidden);
  const double sbf = x.seq_len * x.micro_batch * x.ffn_hidden;
  const double as2b = x.heads * x.seq_len * x.seq_len * x.micro_batch;
  const double kv = x.kv_heads / x.heads;
  const double act = kActivationBytes;
  constexpr bool kSharded = true;
  constexpr bool kReplicated = false;
  constexpr bool kCore = true;

  std::vector<ActivationTerm> terms;
  // Attention block (Korthikanti et al. 2022, section 4.1: 11sbh + 5as^2b for GPT).
  terms.push_back({"ln1 input", act * sbh, kReplicated, false});
  const double lin = x.linear_input_bytes;  // what a linear keeps of its input for wgrad
  terms.push_back({"qkv input", lin * sbh, kReplicated, false});
  terms.push_back({"q", act * sbq, kSharded, false});
  terms.push_back({"k", act * sbq * kv, kSharded, false});
  terms.push_back({"softmax output", act * as2b, kSharded, kCore});
  if (x.dropout) {
    terms.push_back({"softmax dropout mask", kMaskBytes * as2b, kSharded, kCore});
    terms.push_back({"softmax dropout output", act * as2b, kSharded, kCore});
  }
  terms.push_back({"v", act * sbq * kv, kSharded, false});
  if (lin != act && x.attention_keeps_output) {
    // FlashAttention's backward reads its output: kept in bf16 beside the linear's own copy.
    terms.push_back({"attention output", act * sbq, kSharded, false});
  }
  terms.push_back({"out-proj input", lin * sbq, kSharded, false});
  if (x.dropout) terms.push_back({"attn dropout mask", kMaskBytes * sbh, kReplicated, false});
  // MLP block (section 4.1: 19sbh for GPT with f = 4h) and its norm (2sbh).
  terms.push_back({"ln2 input", act * sbh, kReplicated, false});
  terms.push_back({"fc1 input", lin * sbh, kReplicated, false});
  if (x.swiglu) {
    terms.push_back({"gate output", act * sbf, kSharded, false});
    terms.push_back({"up output", act * sbf, kSharded, false});
    terms.push_back({"down input", lin * sbf, kSharded, false});
  } else {
    terms.push_back({"gelu input", act * sbf, kSharded, false});
    terms.push_back({"fc2 input", lin * sbf, kSharded, false});
  }
  if (x.dropout) terms.push_back({"mlp dropout mask", kMaskBytes * sbh, kReplicated, false});
  return terms;
}

Bytes activation_bytes_per_layer(const ActivationShape& x, Recompute recompute) {
  check(x);
  const double tp = x.tp;
  if (recompute == Recompute::kFull) {
    // Only the layer input (2sbh) is checkpointed; sequence-sharded with SP.
    const double input = kActivationBytes * x.seq_len * x.micro_batch * x.hidden;
    return {x.sequence_parallel ? input / tp : input};
  }
  if (recompute == Recompute::kPerOp) return per_op_sac_saved_bytes(x);
  double total = 0;
  for (const auto& term : activation_terms_per_layer(x)) {
    if (recompute == Recompute::kSelective && term.attention_core) continue;
    total += (term.sharded_by_tp || x.sequence_parallel) ? term.bytes / tp : term.bytes;
  }
  return {total};
}

}  // namespace parasim::cost
