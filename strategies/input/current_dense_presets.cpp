#include "strategies/input/current_dense_presets.hpp"

#include <string>
#include <tuple>
#include <utility>

namespace parasim::strat {
namespace {

// Llama 3 (Grattafiori et al., "The Llama 3 Herd of Models", arXiv:2407.21783, Table 3: 8B 32
// layers d 4096 FFN 14336 32 heads 8 KV; 70B 80 / 8192 / 28672 / 64 / 8; 405B 126 / 16384 /
// 53248 / 128 / 8; vocabulary 128K; sec. 3.4.1: pre-training on 8K-token sequences, then a
// long-context stage to 128K), with meta-llama/llama-models models/sku_list.py and the model
// cards (models/llama3*/MODEL_CARD.md) for vocab_size 128256 and the contexts.
constexpr const char* kLlama3 =
    "Grattafiori et al., \"The Llama 3 Herd of Models\", arXiv:2407.21783, Table 3 and sec. "
    "3.4.1 (8K pre-training sequences); meta-llama/llama-models models/sku_list.py (dim, layers, "
    "heads, KV heads; FFN from ffn_dim_multiplier and multiple_of) and MODEL_CARD.md; Hugging "
    "Face meta-llama config.json: vocab_size 128256, tie_word_embeddings false";

constexpr const char* kQwen25 =
    "Qwen Team, \"Qwen2.5 Technical Report\", arXiv:2412.15115; Hugging Face Qwen/Qwen2.5 "
    "config.json (vocab_size 152064, tie_word_embeddings false) and transformers modeling_qwen2 "
    "(bias on q_proj, k_proj, v_proj only); Megatron-Bridge qwen_provider.py (add_qkv_bias). "
    "Sequence 4096 as its first pre-training stage";

constexpr const char* kQwen3 =
    "Qwen Team, \"Qwen3 Technical Report\", arXiv:2505.09388 (q/k RMSNorm per head, no QKV "
    "bias; 4096-token sequences in the first two pre-training stages); Hugging Face Qwen/Qwen3 "
    "config.json (head_dim 128, vocab_size 151936, tie_word_embeddings false for 8B and up, "
    "attention_bias false)";

}  // namespace

void append_current_dense_presets(std::vector<ModelPreset>& p) {
  // Llama 3 / 3.1 / 3.2.
  p.push_back(make_model_preset(
      "Llama 3 8B: 32 layers, hidden 4096, 32 heads, 8 KV heads, SwiGLU 14336, "
      "vocabulary 128256, context 8192",
      kLlama3, llama_layout("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192, false)));
  p.push_back(make_model_preset(
      "Llama 3 70B: 80 layers, hidden 8192, 64 heads, 8 KV heads, SwiGLU 28672, "
      "vocabulary 128256, context 8192",
      kLlama3, llama_layout("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192, false)));
  for (const auto& [name, layers, hidden, heads, ffn, size] :
       {std::tuple{"llama3.1-8b", 32, 4096, 32, 14336, "8B"},
        std::tuple{"llama3.1-70b", 80, 8192, 64, 28672, "70B"},
        std::tuple{"llama3.1-405b", 126, 16384, 128, 53248, "405B"}}) {
    p.push_back(make_model_preset(
        std::string("Llama 3.1 ") + size + ": " + std::to_string(layers) + " layers, hidden " +
            std::to_string(hidden) + ", " + std::to_string(heads) + " heads, 8 KV heads, SwiGLU " +
            std::to_string(ffn) +
            ", vocabulary 128256; context 131072 (preset sequence 8192, "
            "the pre-training length)",
        kLlama3, llama_layout(name, layers, hidden, heads, 8, ffn, 128256, 8192, false)));
  }
  {
    ModelSpec m = llama_layout("llama3.2-1b", 16, 2048, 32, 8, 8192, 128256, 8192, true);
    p.push_back(
        make_model_preset("Llama 3.2 1B (1.23B): 16 layers, hidden 2048, 32 heads of 64, 8 KV "
                          "heads, SwiGLU 8192, tied embeddings; context 131072 (preset sequence "
                          "8192)",
                          std::string(kLlama3) + "; Llama 3.2 MODEL_CARD.md (1.23B, shared "
                                                 "embeddings)",
                          m));
  }
  {
    ModelSpec m = llama_layout("llama3.2-3b", 28, 3072, 24, 8, 8192, 128256, 8192, true);
    p.push_back(
        make_model_preset("Llama 3.2 3B (3.21B): 28 layers, hidden 3072, 24 heads of 128, 8 KV "
                          "heads, SwiGLU 8192, tied embeddings; context 131072 (preset sequence "
                          "8192)",
                          std::string(kLlama3) + "; Llama 3.2 MODEL_CARD.md (3.21B, shared "
                                                 "embeddings)",
                          m));
  }
  // Qwen2.5: QKV biases only.
  for (const auto& [name, size, layers, hidden, heads, kv, ffn] :
       {std::tuple{"qwen2.5-7b", "7B", 28, 3584, 28, 4, 18944},
        std::tuple{"qwen2.5-14b", "14B", 48, 5120, 40, 8, 13824},
        std::tuple{"qwen2.5-32b", "32B", 64, 5120, 40, 8, 27648},
        std::tuple{"qwen2.5-72b", "72B", 80, 8192, 64, 8, 29568}}) {
    ModelSpec m = llama_layout(name, layers, hidden, heads, kv, ffn, 152064, 4096, false);
    m.qkv_bias = true;
    p.push_back(make_model_preset(
        std::string("Qwen2.5 ") + size + ": " + std::to_string(layers) + " layers, hidden " +
            std::to_string(hidden) + ", " + std::to_string(heads) + " heads, " +
            std::to_string(kv) + " KV heads, SwiGLU " + std::to_string(ffn) +
            ", QKV biases, vocabulary 152064; context 131072 (preset sequence "
            "4096)",
        kQwen25, m));
  }
  // Qwen3 dense: heads of 128 whatever the hidden size, per-head q/k norms.
  for (const auto& [name, size, layers, hidden, heads, ffn] :
       {std::tuple{"qwen3-8b", "8B", 36, 4096, 32, 12288},
        std::tuple{"qwen3-14b", "14B", 40, 5120, 40, 17408},
        std::tuple{"qwen3-32b", "32B", 64, 5120, 64, 25600}}) {
    ModelSpec m = llama_layout(name, layers, hidden, heads, 8, ffn, 151936, 4096, false);
    m.explicit_head_dim = 128;
    m.qk_norm = QkNorm::kPerHead;
    p.push_back(make_model_preset(
        std::string("Qwen3 ") + size + ": " + std::to_string(layers) + " layers, hidden " +
            std::to_string(hidden) + ", " + std::to_string(heads) +
            " heads of 128, 8 KV heads, QK norm, SwiGLU " + std::to_string(ffn) +
            ", vocabulary 151936; context 40960 (preset "
            "sequence 4096)",
        kQwen3, m));
  }
  // Mistral.
  p.push_back(make_model_preset(
      "Mistral 7B v0.3: 32 layers, hidden 4096, 32 heads, 8 KV heads, SwiGLU 14336, vocabulary "
      "32768, no sliding window; context 32768 (preset sequence 4096: no published pre-training "
      "length)",
      "Jiang et al., \"Mistral 7B\", arXiv:2310.06825, Table 1 (dim 4096, 32 layers, head_dim "
      "128, hidden_dim 14336, 32 heads, 8 KV heads); Hugging Face mistralai/Mistral-7B-v0.3 "
      "config.json (vocab_size 32768, sliding_window null, tie_word_embeddings false)",
      llama_layout("mistral-7b", 32, 4096, 32, 8, 14336, 32768, 4096, false)));
  {
    ModelSpec m = llama_layout("mistral-nemo-12b", 40, 5120, 32, 8, 14336, 131072, 4096, false);
    m.explicit_head_dim = 128;
    p.push_back(make_model_preset(
        "Mistral NeMo 12B: 40 layers, hidden 5120, 32 heads of 128, 8 KV heads, SwiGLU 14336, "
        "vocabulary 131072; context 128K (preset sequence 4096: no published pre-training "
        "length)",
        "Mistral AI, \"Mistral NeMo\" (2024-07-18; 12B, 128K context, Tekken tokenizer); "
        "Hugging Face mistralai/Mistral-Nemo-Base-2407 config.json (num_hidden_layers 40, "
        "hidden_size 5120, head_dim 128, num_attention_heads 32, num_key_value_heads 8, "
        "intermediate_size 14336, vocab_size 131072)",
        m));
  }
}

}  // namespace parasim::strat
