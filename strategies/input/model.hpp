#pragma once
// parasim::strat::ModelSpec — a decoder-only transformer, dense or a mixture of experts, as a
// scenario describes it.
//
// Invariants (checked by the scenario parser): heads % kv_heads == 0; hidden % heads == 0 unless
// head_dim is given (Qwen3: 32 heads of 128 on hidden 2048); all sizes positive; with MoE,
// top_k <= experts and first_dense_layers < layers. Parameter counts follow the usual GPT/Llama
// layouts, DeepSeek's for MLA and its multi-token prediction (see model.cpp); a test checks each
// preset's total against its published count.

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
  bool operator==(const LowRank&) const = default;
};

// Multi-head latent attention (DeepSeek-V2, arXiv 2405.04434 sec. 2.1; DeepSeek-V3, arXiv
// 2412.19437 sec. 2.1.1): the query through a q_lora_rank latent (0: one full projection), keys
// and values through a kv_lora_rank latent (what inference caches), each head's query and key a
// no-position part of qk_nope_head_dim and a decoupled RoPE part of qk_rope_head_dim (the key's
// RoPE part one per token, shared by the heads), values of v_head_dim per head.
struct MlaSpec {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  bool enabled() const { return kv_lora_rank > 0; }
  bool operator==(const MlaSpec&) const = default;
};

enum class QkNorm { kNone, kPerHead, kFull };
const char* qk_norm_name(QkNorm n);

// How the router scores the experts: softmax over the experts (Mixtral, Qwen3, OLMoE), or a
// sigmoid per expert whose top-k is taken with a bias (DeepSeek-V3, sec. 2.1.2).
enum class RouterScore { kSoftmax, kSigmoid };
// How the load is balanced: an auxiliary loss over the batch (aux_loss) or per sequence
// (seq_aux_loss), a per-expert bias updated at each step (expert_bias: the auxiliary-loss-free
// strategy, arXiv 2408.15664, which DeepSeek-V3 uses with a small sequence loss), or none.
enum class LoadBalancing { kAuxLoss, kSeqAuxLoss, kExpertBias, kNone };
const char* router_score_name(RouterScore s);
const char* load_balancing_name(LoadBalancing b);

// A mixture of experts (Shazeer et al. 2017; GShard, arXiv 2006.16668; DeepSeekMoE, arXiv
// 2401.06066): in every MoE layer the MLP is `experts` routed experts of expert_ffn_hidden, of
// which each token uses top_k, plus `shared_experts` every token uses; the first
// first_dense_layers layers keep their dense MLP of ffn_hidden, and of the rest every
// layer_freq-th is MoE (Megatron-LM's --moe-layer-freq).
struct MoeSpec {
  int experts = 0;            // E; 0: a dense model
  int top_k = 0;              // k
  int expert_ffn_hidden = 0;  // F of a routed expert
  int shared_experts = 0;     // S
  int shared_ffn_hidden = 0;  // F of a shared expert
  int first_dense_layers = 0;
  int layer_freq = 1;
  RouterScore score = RouterScore::kSoftmax;
  LoadBalancing balancing = LoadBalancing::kAuxLoss;
  // Tokens an expert takes at most, over its fair share k T / E (Megatron-LM's
  // --moe-expert-capacity-factor); 0: dropless (every routed token is computed).
  double capacity_factor = 0;
  // The router's skew: the busiest expert's load over the mean, minus 1 (MaxVio, arXiv
  // 2408.15664 eq. 4), over the tokens of a step; < 0: the default of the balancing
  // (costmodel/expert_load.hpp says where each comes from).
  double max_violation = -1;
  bool enabled() const { return experts > 0; }
  // Whether layer `layer` (0-based) has an MoE MLP.
  bool is_moe_layer(int layer) const {
    return enabled() && layer >= first_dense_layers &&
           (layer - first_dense_layers) % layer_freq == 0;
  }
  // MoE layers among layers [first, first + count).
  int moe_layers_in(int first, int count) const;
  bool operator==(const MoeSpec&) const = default;
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
  // Biases on the query, key and value projections only (Qwen2 / Qwen2.5: attention_bias on
  // q_proj, k_proj, v_proj; Megatron-LM's --add-qkv-bias); implied by linear_bias.
  bool qkv_bias = false;
  bool learned_positions = false;  // GPT: a seq_len x hidden position table; Llama uses RoPE
  LowRank low_rank;                // dense unless enabled()
  int explicit_head_dim = 0;       // 0: hidden / heads (Qwen3 sets 128 with hidden 2048)
  MlaSpec mla;                     // multi-head latent attention when enabled()
  MoeSpec moe;                     // a mixture of experts when enabled()
  // DeepSeek-V3's multi-token prediction (sec. 2.2): this many extra layers after the last, each
  // with two norms, a 2h x h projection and a transformer layer (MoE when the model is), sharing
  // the embedding and the head; their loss adds a head pass each.
  int mtp_layers = 0;
  // Norms of the queries and keys before attention: per head (Qwen3: q_norm and k_norm of d
  // each) or over all heads (OLMoE: q of a d, k of kv d); their weights and kernels.
  QkNorm qk_norm = QkNorm::kNone;

  int head_dim() const { return explicit_head_dim > 0 ? explicit_head_dim : hidden / heads; }
  // The width of all query heads (and of the attention output), a * d; hidden for most models.
  int query_width() const { return heads * head_dim(); }
  // Parameters of the attention block: QKV (or MLA's projections and norms) and the output.
  std::int64_t attention_params() const;
  // Parameters of one routed (or shared) expert, or of a dense MLP of width `ffn`.
  std::int64_t mlp_params(int ffn) const;
  // Parameters of layer `layer` (attention, MLP or experts with the router, two norms).
  std::int64_t params_of_layer(int layer) const;
  // A dense layer's parameters (every layer of a dense model).
  std::int64_t params_per_layer() const;
  // A layer's parameters a token uses: the dense MLP, or top_k routed and the shared experts.
  std::int64_t active_params_of_layer(int layer) const;
  // Input embedding (V*h), learned positions (s*h) when present, the output head (V*h) when
  // untied, and the final norm.
  std::int64_t embedding_params() const;
  // The multi-token prediction layers' own parameters (the shared embedding and head excluded).
  std::int64_t mtp_params() const;
  // Everything: the layers, the embeddings and head, the MTP layers.
  std::int64_t total_params() const;
  // What a token uses (DeepSeek-V3's "37B activated"): embeddings and head included, MTP not.
  std::int64_t active_params() const;
  bool operator==(const ModelSpec&) const = default;
};

}  // namespace parasim::strat
