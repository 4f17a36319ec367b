#pragma once
// parasim::strat::ModelSpec — a dense decoder-only transformer, as a scenario describes it.
//
// Invariants (checked by the scenario parser): heads % kv_heads == 0, hidden % heads == 0, all
// sizes positive. Parameter counts follow the usual GPT/Llama layouts (see model.cpp).

#include <cstdint>
#include <string>

namespace parasim::strat {

enum class MlpKind { kGelu, kSwiglu };          // gelu: 2 matrices h<->f; swiglu: 3 (gate, up, down)
enum class NormKind { kLayerNorm, kRmsNorm };   // layernorm has a bias, rmsnorm does not

// Low-rank (bottleneck) linears (BOOST, arXiv 2512.12131, sec. 2): every dense d_in -> d_out of
// attention (Q, K, V, O) and MLP (gate, up, down) becomes d_in -> r -> d_out. svd: no
// nonlinearity between; cola: an activation on the r-wide bottleneck (CoLA); lax: CoLA plus LaX's
// latent crossing (arXiv 2505.21732), the previous pair's latent added to this pair's before the
// up-projection (one elementwise add per pair; LaX's optional gates are not modelled).
enum class LowRankVariant { kSvd, kCola, kLax };
const char* low_rank_variant_name(LowRankVariant v);

struct LowRank {
  int attn_rank = 0;  // r for Q, K, V, O; 0 = dense
  int mlp_rank = 0;   // r for gate, up, down; 0 = dense
  LowRankVariant variant = LowRankVariant::kCola;
  bool enabled() const { return attn_rank > 0 && mlp_rank > 0; }
};

struct ModelSpec {
  std::string name;          // preset name or "custom"
  int layers = 0;
  int hidden = 0;            // h
  int heads = 0;             // a (query heads)
  int kv_heads = 0;          // GQA groups; == heads for multi-head attention
  int ffn_hidden = 0;        // f
  int vocab = 0;             // V
  int seq_len = 0;           // s, training sequence length
  MlpKind mlp = MlpKind::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  bool tied_embeddings = false;  // output head shares the input embedding
  bool dropout = true;           // dropout masks stored (GPT); Llama trains without dropout
  bool linear_bias = true;       // GPT linears carry biases; Llama's do not
  bool learned_positions = false;  // GPT: a seq_len x hidden position table; Llama uses RoPE
  LowRank low_rank;                // dense unless enabled()

  int head_dim() const { return hidden / heads; }
  // Parameters of one transformer layer (attention, MLP, two norms).
  std::int64_t params_per_layer() const;
  // Input embedding (V*h), learned positions (s*h) when present, the output head (V*h) when
  // untied, and the final norm.
  std::int64_t embedding_params() const;
  std::int64_t total_params() const;
};

}  // namespace parasim::strat
