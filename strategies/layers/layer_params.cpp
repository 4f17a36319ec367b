// Parameter counts of a layer, its modules, the embedding and the head per tensor-parallel rank
// (declared in layer_program.hpp): what memory, the data-parallel reductions and the FP8 weight
// casts count. Split from layer_program.cpp, which writes the kernels.
#include <algorithm>
#include <cmath>
#include <vector>

#include "strategies/layers/layer_program.hpp"

namespace parasim::strat {

double attention_params_per_tp_rank(const ModelSpec& m, int tp) {
  if (!m.mla.enabled()) {
    return static_cast<double>(m.attention_params()) / tp;  // as layer_params_per_tp_rank splits
  }
  // MLA: the down projections and their norms duplicated on every tp rank, the up projections
  // and the output split (megatron-core MLASelfAttention).
  const auto& a = m.mla;
  const double h = m.hidden, heads = m.heads, qr = a.q_lora_rank, kvr = a.kv_lora_rank;
  const double qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
  const double duplicated = (qr > 0 ? h * qr + qr : 0.0) + h * (kvr + a.qk_rope_head_dim) + kvr;
  const double split = (qr > 0 ? qr : h) * heads * qk +
                       kvr * heads * (a.qk_nope_head_dim + a.v_head_dim) + heads * a.v_head_dim * h;
  return duplicated + split / tp;
}

double layer_params_per_tp_rank(const ModelSpec& m, int tp) {
  if (m.mla.enabled()) {
    const double h = m.hidden;
    const double norms = 2 * (m.norm == NormKind::kLayerNorm ? 2 * h : h);
    return attention_params_per_tp_rank(m, tp) +
           static_cast<double>(m.mlp_params(m.ffn_hidden)) / tp + norms;
  }
  const double h = m.hidden, f = m.ffn_hidden, d = m.head_dim(), t = tp;
  const double kv = static_cast<double>(m.kv_heads) * d, q = m.query_width();
  const double mats = m.mlp == MlpKind::kSwiglu ? 3 : 2;
  double sharded = h * q + 2 * h * kv + q * h + mats * h * f;  // all weight matrices
  double replicated = 2 * (m.norm == NormKind::kLayerNorm ? 2 * h : h);
  if (m.qk_norm == QkNorm::kPerHead) replicated += 2 * d;  // one d-wide scale each for q and k
  if (m.qk_norm == QkNorm::kFull) sharded += q + kv;       // over all heads: split as the heads
  if (m.linear_bias) {
    sharded += q + 2 * kv + (mats - 1) * f;  // column-parallel biases (QKV, fc1)
    replicated += 2 * h;                     // row-parallel biases (out proj, fc2)
  } else if (m.qkv_bias) {
    sharded += q + 2 * kv;
  }
  return sharded / t + replicated;
}

LayerParams layer_params_on_rank(const ModelSpec& m, const ParallelSpec& p, int layer) {
  if (!m.moe.is_moe_layer(layer)) return {layer_params_per_tp_rank(m, p.tp), 0.0};
  const double h = m.hidden;
  const double norms = 2 * (m.norm == NormKind::kLayerNorm ? 2 * h : h);
  const double router =
      h * m.moe.experts + (m.moe.score == RouterScore::kSigmoid ? m.moe.experts : 0);
  const double shared = static_cast<double>(m.moe.shared_experts) *
                        static_cast<double>(m.mlp_params(m.moe.shared_ffn_hidden));
  const double local = static_cast<double>(m.moe.experts) / p.ep *
                       static_cast<double>(m.mlp_params(m.moe.expert_ffn_hidden)) / p.expert_tp();
  return {attention_params_per_tp_rank(m, p.tp) + norms + router + shared / p.tp, local};
}

LayerParams layers_params_on_rank(const ModelSpec& m, const ParallelSpec& p, int first, int count) {
  LayerParams sum;
  for (int l = first; l < first + count; ++l) {
    const LayerParams one = layer_params_on_rank(m, p, l);
    sum.dense += one.dense;
    sum.expert += one.expert;
  }
  return sum;
}

std::vector<std::vector<double>> layer_module_tensors_per_tp_rank(const ModelSpec& m, int tp) {
  const double h = m.hidden, f = m.ffn_hidden, t = tp;
  const double kv = static_cast<double>(m.kv_heads) * m.head_dim();
  const double up = m.mlp == MlpKind::kSwiglu ? 2 : 1;  // fc1 holds SwiGLU's gate and up
  const std::vector<double> norm =
      m.norm == NormKind::kLayerNorm ? std::vector<double>{h, h} : std::vector<double>{h};
  auto linear = [&](double weight, double bias) {
    return m.linear_bias ? std::vector<double>{weight, bias} : std::vector<double>{weight};
  };
  const double q = m.query_width();
  const double qkv_weight = (h * q + 2 * h * kv) / t, qkv_bias = (q + 2 * kv) / t;
  std::vector<std::vector<double>> modules = {norm, m.qkv_bias && !m.linear_bias
                                                        ? std::vector<double>{qkv_weight, qkv_bias}
                                                        : linear(qkv_weight, qkv_bias)};
  if (m.qk_norm == QkNorm::kPerHead) {
    const double d = m.head_dim();
    modules.push_back({d, d});
  }
  if (m.qk_norm == QkNorm::kFull) modules.push_back({q / t, kv / t});
  for (auto& module : std::vector<std::vector<double>>{
           linear(q * h / t, h), norm, linear(up * h * f / t, up * f / t), linear(h * f / t, h)}) {
    modules.push_back(std::move(module));
  }
  return modules;
}

int layer_parameter_tensors(const ModelSpec& m) {
  int n = 0;
  for (const auto& module : layer_module_tensors_per_tp_rank(m, 1)) {
    n += static_cast<int>(module.size());
  }
  return n;
}

double layer_matrix_params_per_tp_rank(const ModelSpec& m, int tp) {
  const double h = m.hidden, f = m.ffn_hidden, d = m.head_dim(), q = m.query_width();
  const double kv = static_cast<double>(m.kv_heads) * d;
  const double mats = m.mlp == MlpKind::kSwiglu ? 3 : 2;
  if (m.mla.enabled()) {  // MLA's projections, less its two latent norms
    return attention_params_per_tp_rank(m, tp) - m.mla.q_lora_rank - m.mla.kv_lora_rank +
           mats * h * f / tp;
  }
  return (h * q + 2 * h * kv + q * h + mats * h * f) / tp;
}

int embedding_parameter_tensors(const ModelSpec& m, int stage, int head_stage) {
  int n = 0;
  if (stage == 0) n += 1 + (m.learned_positions ? 1 : 0);
  if (stage == head_stage) {
    n += m.norm == NormKind::kLayerNorm ? 2 : 1;
    if (!m.tied_embeddings || head_stage > 0) n += 1;
    // MTP modules: three norms and the projection, and a layer's tensors each; the embedding's
    // copy (head_params_per_tp_rank)
    const int norm = m.norm == NormKind::kLayerNorm ? 2 : 1;
    n += m.mtp_layers * (3 * norm + 1 + layer_parameter_tensors(m));
    if (m.mtp_layers > 0 && head_stage > 0 && !m.tied_embeddings) n += 1;
  }
  return n;
}

double input_embedding_params_per_tp_rank(const ModelSpec& m, int tp) {
  // The vocabulary table is vocab-parallel; learned positions are replicated (Megatron-LM).
  const double positions = m.learned_positions ? static_cast<double>(m.seq_len) * m.hidden : 0.0;
  return static_cast<double>(m.vocab) * m.hidden / tp + positions;
}

LayerParams mtp_params_on_rank(const ModelSpec& m, const ParallelSpec& p) {
  if (m.mtp_layers == 0) return {};
  const double h = m.hidden, norm = m.norm == NormKind::kLayerNorm ? 2 * h : h;
  const LayerParams layer = layer_params_on_rank(m, p, m.layers - 1);
  return {m.mtp_layers * (3 * norm + 2 * h * h / p.tp + layer.dense), m.mtp_layers * layer.expert};
}

double head_params_per_tp_rank(const ModelSpec& m, int tp, int head_stage) {
  const double final_norm = m.norm == NormKind::kLayerNorm ? 2.0 * m.hidden : m.hidden;
  const bool own_table = !m.tied_embeddings || head_stage > 0;
  ParallelSpec tp_only;
  tp_only.tp = tp;
  // MTP modules read the embedding: with pp > 1 the last stage builds its own copy of the table
  // (megatron-core GPTModel: an embedding when pre_process or mtp_process), the output head's
  // own when tied.
  const bool mtp_table = m.mtp_layers > 0 && head_stage > 0 && !m.tied_embeddings;
  const double table = static_cast<double>(m.vocab) * m.hidden / tp;
  return final_norm + (own_table ? table : 0.0) + (mtp_table ? table : 0.0) +
         mtp_params_on_rank(m, tp_only).dense;
}

double embedding_params_per_tp_rank(const ModelSpec& m, int tp, int stage, int head_stage) {
  double params = 0;
  if (stage == 0) params += input_embedding_params_per_tp_rank(m, tp);
  if (stage == head_stage) params += head_params_per_tp_rank(m, tp, head_stage);
  return params;
}

}  // namespace parasim::strat
