#include "strategies/layers/attention_core.hpp"

#include <cmath>

#include "costmodel/attention_cost.hpp"

namespace parasim::strat::detail {
namespace {

bool multiple_of_4(double v) {
  return std::fmod(v, 4.0) == 0.0;
}

UnfusedAttention unfused_of(const Dims& x) {
  UnfusedAttention a;
  a.problems = x.b * x.a / x.t;
  a.seq_q = x.s;
  a.seq_k = x.s;
  a.head_dim = x.d;
  a.element_bytes = x.e;
  a.sixteen_bit = x.e == 2;
  a.dropout = x.dropout;
  a.fusion = x.fusions.masked_softmax;
  return a;
}

cost::AttentionShape flash_of(const Dims& x) {
  cost::AttentionShape s;
  s.heads = x.b * x.a / x.t;
  s.seq_q = x.s;
  s.seq_kv = x.s;
  s.head_dim = x.d;
  s.causal = true;
  return s;
}

// Megatron repeats K and V to every query head of a group (repeat_interleave, a copy) when there
// are fewer KV heads than query heads: read the KV heads' rows, write the query heads' rows.
double kv_repeat_bytes(const Dims& x) {
  if (!(x.kv < x.a)) return 0;
  return 2 * x.e * x.b * x.s * x.d * (x.kv + x.a) / x.t;
}

}  // namespace

bool fused_softmax_available(const UnfusedAttention& a) {
  return a.fusion && a.sixteen_bit && a.seq_k > 16 && a.seq_k <= 4096 && multiple_of_4(a.seq_q) &&
         multiple_of_4(a.seq_k) && multiple_of_4(a.problems);
}

std::vector<MemoryPass> unfused_attention_passes(const UnfusedAttention& a, bool backward) {
  const double scores = a.problems * a.seq_q * a.seq_k;
  const double e = a.element_bytes;
  const double context = 2 * e * a.problems * a.seq_q * a.head_dim;  // read + write
  const bool fused = fused_softmax_available(a);
  std::vector<MemoryPass> out;
  if (!backward) {
    if (fused) {
      out.push_back({"scale-mask-softmax", 2 * e * scores});
    } else {
      out.push_back({"masked fill", 2 * e * scores});
      out.push_back({"softmax", 2 * e * scores});
    }
    if (a.dropout) out.push_back({"dropout", (2 * e + 1) * scores});  // + bool mask
    out.push_back({"context copy", context});
    return out;
  }
  out.push_back({"context copy backward", context});
  if (a.dropout) out.push_back({"dropout backward", (2 * e + 1) * scores});
  out.push_back({"softmax backward", 3 * e * scores});
  if (!fused) out.push_back({"masked fill backward", 2 * e * scores});
  return out;
}

void attention_core_forward(StepWriter& w, const Dims& x) {
  if (x.flash) return w.flash_attention(flash_of(x), cost::FlashPass::kForward);
  const double heads = x.b * x.a / x.t;
  if (const double kv = kv_repeat_bytes(x); kv > 0) w.memory(kv);
  w.gemm(x.s, x.s, x.d, heads);  // scores = Q K^T, K = head dim
  for (const MemoryPass& p : unfused_attention_passes(unfused_of(x), false)) w.memory(p.bytes);
  w.gemm(x.s, x.d, x.s, heads);  // context = P V
}

void attention_core_backward(StepWriter& w, const Dims& x) {
  if (x.flash) return w.flash_attention(flash_of(x), cost::FlashPass::kBackward);
  const double heads = x.b * x.a / x.t;
  w.activation_gemm_backward(x.s, x.d, x.s, heads);  // dP = dO V^T, dV = P^T dO
  for (const MemoryPass& p : unfused_attention_passes(unfused_of(x), true)) w.memory(p.bytes);
  w.activation_gemm_backward(x.s, x.s, x.d, heads);                // dQ = dS K, dK = dS^T Q
  const double q_or_k = 2 * x.e * heads * x.s * x.d;               // read + write
  w.memory(q_or_k);                                                // dQ x alpha
  w.memory(q_or_k);                                                // dK x alpha
  if (const double kv = kv_repeat_bytes(x); kv > 0) w.memory(kv);  // sum over the repeats
}

}  // namespace parasim::strat::detail
