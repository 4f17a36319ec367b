#include "strategies/input/model.hpp"

namespace parasim::strat {

const char* low_rank_variant_name(LowRankVariant v) {
  switch (v) {
    case LowRankVariant::kSvd: return "svd";
    case LowRankVariant::kCola: return "cola";
    case LowRankVariant::kLax: return "lax";
  }
  return "?";
}

std::int64_t ModelSpec::params_per_layer() const {
  const std::int64_t h = hidden, f = ffn_hidden, d = head_dim();
  const std::int64_t kv = static_cast<std::int64_t>(kv_heads) * d;
  const std::int64_t norm_params = 2 * (norm == NormKind::kLayerNorm ? 2 * h : h);
  if (low_rank.enabled()) {
    // Each d_in -> d_out becomes d_in x r + r x d_out (biases of low-rank layers not modelled).
    const std::int64_t ra = low_rank.attn_rank, rm = low_rank.mlp_rank;
    const std::int64_t attn = (h * ra + ra * h) + 2 * (h * ra + ra * kv) + (h * ra + ra * h);
    const std::int64_t mlp_pairs = mlp == MlpKind::kSwiglu ? 2 : 1;  // gate+up, or up
    const std::int64_t mlp_params = mlp_pairs * (h * rm + rm * f) + (f * rm + rm * h);
    return attn + mlp_params + norm_params;
  }
  // Attention: Q (h x h), K and V (h x kv each), output (h x h).
  std::int64_t attn = h * h + 2 * h * kv + h * h;
  if (linear_bias) attn += h + 2 * kv + h;
  // MLP: gelu has up (h x f) and down (f x h); swiglu adds a gate (h x f).
  const std::int64_t mats = mlp == MlpKind::kSwiglu ? 3 : 2;
  std::int64_t mlp_params = mats * h * f;
  if (linear_bias) mlp_params += (mats - 1) * f + h;
  // Two norms per layer: layernorm has scale and bias, rmsnorm only a scale.
  return attn + mlp_params + norm_params;
}

std::int64_t ModelSpec::embedding_params() const {
  const std::int64_t table = static_cast<std::int64_t>(vocab) * hidden;
  const std::int64_t final_norm = norm == NormKind::kLayerNorm ? 2 * hidden : hidden;
  const std::int64_t positions =
      learned_positions ? static_cast<std::int64_t>(seq_len) * hidden : 0;
  return table * (tied_embeddings ? 1 : 2) + positions + final_norm;
}

std::int64_t ModelSpec::total_params() const {
  return static_cast<std::int64_t>(layers) * params_per_layer() + embedding_params();
}

}  // namespace parasim::strat
