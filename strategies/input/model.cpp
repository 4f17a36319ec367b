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

const char* qk_norm_name(QkNorm n) {
  switch (n) {
    case QkNorm::kNone:
      return "none";
    case QkNorm::kPerHead:
      return "per-head";
    case QkNorm::kFull:
      return "full";
  }
  return "?";
}

const char* router_score_name(RouterScore s) {
  return s == RouterScore::kSigmoid ? "sigmoid" : "softmax";
}

const char* load_balancing_name(LoadBalancing b) {
  switch (b) {
    case LoadBalancing::kAuxLoss:
      return "aux_loss";
    case LoadBalancing::kSeqAuxLoss:
      return "seq_aux_loss";
    case LoadBalancing::kExpertBias:
      return "expert_bias";
    case LoadBalancing::kNone:
      return "none";
  }
  return "?";
}

int MoeSpec::moe_layers_in(int first, int count) const {
  int n = 0;
  for (int l = first; l < first + count; ++l) n += is_moe_layer(l) ? 1 : 0;
  return n;
}

std::int64_t ModelSpec::attention_params() const {
  const std::int64_t h = hidden, a = heads;
  if (mla.enabled()) {
    // DeepSeek-V3 (HF modeling_deepseek.py DeepseekV3Attention): q_a_proj h x q_r, q_a_layernorm,
    // q_b_proj q_r x a (nope + rope) (or q_proj h x a (nope + rope) without q_r);
    // kv_a_proj_with_mqa h x (kv_r + rope), kv_a_layernorm, kv_b_proj kv_r x a (nope + v);
    // o_proj a v x h.
    const std::int64_t qr = mla.q_lora_rank, kvr = mla.kv_lora_rank;
    const std::int64_t qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
    const std::int64_t q = qr > 0 ? h * qr + qr + qr * a * qk : h * a * qk;
    return q + h * (kvr + mla.qk_rope_head_dim) + kvr +
           kvr * a * (mla.qk_nope_head_dim + mla.v_head_dim) + a * mla.v_head_dim * h;
  }
  const std::int64_t d = head_dim(), q = a * d, kv = static_cast<std::int64_t>(kv_heads) * d;
  std::int64_t params = h * q + 2 * h * kv + q * h;  // Q, K, V, output
  if (linear_bias) params += q + 2 * kv + h;
  else if (qkv_bias) params += q + 2 * kv;
  if (qk_norm == QkNorm::kPerHead) params += 2 * d;
  if (qk_norm == QkNorm::kFull) params += q + kv;
  return params;
}

std::int64_t ModelSpec::mlp_params(int ffn) const {
  const std::int64_t h = hidden, f = ffn;
  const std::int64_t mats = mlp == MlpKind::kSwiglu ? 3 : 2;  // gelu: up, down; swiglu: + gate
  std::int64_t params = mats * h * f;
  if (linear_bias) params += (mats - 1) * f + h;
  return params;
}

std::int64_t ModelSpec::params_of_layer(int layer) const {
  const std::int64_t h = hidden;
  const std::int64_t norms = 2 * (norm == NormKind::kLayerNorm ? 2 * h : h);
  if (!moe.is_moe_layer(layer)) return params_per_layer();
  // The router's h x E weight, and the sigmoid router's per-expert bias (DeepSeek-V3's
  // e_score_correction_bias, E values).
  const std::int64_t router =
      h * moe.experts + (moe.score == RouterScore::kSigmoid ? moe.experts : 0);
  return attention_params() + norms + router +
         static_cast<std::int64_t>(moe.experts) * mlp_params(moe.expert_ffn_hidden) +
         static_cast<std::int64_t>(moe.shared_experts) * mlp_params(moe.shared_ffn_hidden);
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
  // Two norms per layer: layernorm has scale and bias, rmsnorm only a scale.
  return attention_params() + mlp_params(ffn_hidden) + norm_params;
}

std::int64_t ModelSpec::active_params_of_layer(int layer) const {
  if (!moe.is_moe_layer(layer)) return params_of_layer(layer);
  const std::int64_t routed_unused =
      static_cast<std::int64_t>(moe.experts - moe.top_k) * mlp_params(moe.expert_ffn_hidden);
  return params_of_layer(layer) - routed_unused;
}

std::int64_t ModelSpec::embedding_params() const {
  const std::int64_t table = static_cast<std::int64_t>(vocab) * hidden;
  const std::int64_t final_norm = norm == NormKind::kLayerNorm ? 2 * hidden : hidden;
  const std::int64_t positions =
      learned_positions ? static_cast<std::int64_t>(seq_len) * hidden : 0;
  return table * (tied_embeddings ? 1 : 2) + positions + final_norm;
}

std::int64_t ModelSpec::mtp_params() const {
  if (mtp_layers == 0) return 0;
  // Each module (DeepSeek-V3 sec. 2.2): the norms of its two inputs, the projection of their
  // concatenation (2h -> h), one transformer layer of the model's last kind, its own final norm.
  const std::int64_t h = hidden, norm_size = norm == NormKind::kLayerNorm ? 2 * h : h;
  return static_cast<std::int64_t>(mtp_layers) *
         (2 * norm_size + 2 * h * h + params_of_layer(layers - 1) + norm_size);
}

std::int64_t ModelSpec::total_params() const {
  std::int64_t n = embedding_params() + mtp_params();
  for (int l = 0; l < layers; ++l) n += params_of_layer(l);
  return n;
}

std::int64_t ModelSpec::active_params() const {
  std::int64_t n = embedding_params();
  for (int l = 0; l < layers; ++l) n += active_params_of_layer(l);
  return n;
}

}  // namespace parasim::strat
