#include "strategies/input/model_presets.hpp"

#include <utility>

#include "strategies/input/current_dense_presets.hpp"
#include "strategies/input/moe_presets.hpp"

namespace parasim::strat {
namespace {

// GPT-2 / GPT-3 layout: multi-head attention, 4h GeLU MLP, LayerNorm, biases on every linear,
// input and output embeddings tied, dropout during training, GPT-2 BPE vocabulary of 50257.
ModelSpec gpt(std::string name, int layers, int hidden, int heads, int seq_len) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.ffn_hidden = 4 * hidden;
  m.vocab = 50257;
  m.seq_len = seq_len;
  m.mlp = MlpKind::kGelu;
  m.norm = NormKind::kLayerNorm;
  m.tied_embeddings = true;
  m.dropout = true;
  m.linear_bias = true;
  m.learned_positions = true;
  return m;
}

// Llama 2 layout: a 32000-token SentencePiece vocabulary, 4096-token context, untied head.
ModelSpec llama2(std::string name, int layers, int hidden, int heads, int kv_heads,
                 int ffn_hidden) {
  return llama_layout(std::move(name), layers, hidden, heads, kv_heads, ffn_hidden, 32000, 4096,
                      false);
}

ModelPreset preset(std::string description, std::string source, ModelSpec spec) {
  return make_model_preset(std::move(description), std::move(source), std::move(spec));
}

constexpr const char* kLlama2Paper =
    "Touvron et al., \"Llama 2: Open Foundation and Fine-Tuned Chat Models\", arXiv:2307.09288 "
    "(2023), Table 1 (context 4096, GQA for 70B)";

std::vector<ModelPreset> build_presets() {
  std::vector<ModelPreset> presets;
  presets.push_back(preset(
      "GPT-2 medium, 355M: 24 layers, hidden 1024, 16 heads, context 1024",
      "Radford et al., \"Language Models are Unsupervised Multitask Learners\" (2019), Table 2; "
      "Hugging Face openai-community/gpt2-medium config.json (n_layer 24, n_embd 1024, n_head "
      "16, n_ctx 1024, vocab_size 50257, gelu, tied lm_head, dropout 0.1, learned position "
      "embeddings 1024 x 1024).",
      gpt("gpt2-medium", 24, 1024, 16, 1024)));
  presets.push_back(preset(
      "GPT-3 175B: 96 layers, hidden 12288, 96 heads, context 2048",
      "Brown et al., \"Language Models are Few-Shot Learners\", arXiv:2005.14165 (2020), Table "
      "2.1 (n_layers 96, d_model 12288, n_heads 96, d_head 128, n_ctx 2048; GPT-2 architecture "
      "and 50257-token BPE vocabulary). Dense attention throughout; the paper's alternating "
      "locally banded sparse layers are not modelled.",
      gpt("gpt3-175b", 96, 12288, 96, 2048)));
  {
    ModelSpec m = llama2("llama-953m", 16, 2048, 16, 16, 5632);
    m.seq_len = 1024;
    presets.push_back(preset(
        "Llama-953M (DASH's model): 16 layers, hidden 2048, 16 heads, SwiGLU 5632, context 1024",
        "DASH, arXiv 2602.02016, sec. 5 and the IST-DASLab/DASH repository (16 layers, d 2048, "
        "16 heads, vocab 32000, sequence 1024); ffn 5632 (= 2.75 d) makes the parameter count "
        "953M with untied embeddings (ours, from the name)",
        m));
  }
  presets.push_back(preset(
      "Llama 2 7B: 32 layers, hidden 4096, 32 heads (MHA), SwiGLU 11008, context 4096",
      std::string(kLlama2Paper) +
          "; Hugging Face meta-llama/Llama-2-7b-hf config.json (num_hidden_layers 32, "
          "hidden_size 4096, num_attention_heads 32, num_key_value_heads 32, intermediate_size "
          "11008, vocab_size 32000, tie_word_embeddings false).",
      llama2("llama2-7b", 32, 4096, 32, 32, 11008)));
  presets.push_back(preset(
      "Llama 2 13B: 40 layers, hidden 5120, 40 heads (MHA), SwiGLU 13824, context 4096",
      std::string(kLlama2Paper) +
          "; Hugging Face meta-llama/Llama-2-13b-hf config.json (num_hidden_layers 40, "
          "hidden_size 5120, num_attention_heads 40, num_key_value_heads 40, intermediate_size "
          "13824, vocab_size 32000).",
      llama2("llama2-13b", 40, 5120, 40, 40, 13824)));
  presets.push_back(preset(
      "Llama 2 70B: 80 layers, hidden 8192, 64 heads, 8 KV heads (GQA), SwiGLU 28672, "
      "context 4096",
      std::string(kLlama2Paper) +
          "; Hugging Face meta-llama/Llama-2-70b-hf config.json (num_hidden_layers 80, "
          "hidden_size 8192, num_attention_heads 64, num_key_value_heads 8, intermediate_size "
          "28672, vocab_size 32000).",
      llama2("llama2-70b", 80, 8192, 64, 8, 28672)));
  append_current_dense_presets(presets);
  append_moe_presets(presets);
  return presets;
}

}  // namespace

ModelSpec llama_layout(std::string name, int layers, int hidden, int heads, int kv_heads,
                       int ffn_hidden, int vocab, int seq_len, bool tied) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn_hidden;
  m.vocab = vocab;
  m.seq_len = seq_len;
  m.mlp = MlpKind::kSwiglu;
  m.norm = NormKind::kRmsNorm;
  m.tied_embeddings = tied;
  m.dropout = false;
  m.linear_bias = false;
  return m;
}

ModelPreset make_model_preset(std::string description, std::string source, ModelSpec spec) {
  std::string name = spec.name;
  return ModelPreset{std::move(name), std::move(description), std::move(source), std::move(spec)};
}

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> kPresets = build_presets();
  return kPresets;
}

const ModelPreset* find_model_preset(std::string_view name) {
  for (const auto& p : model_presets()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace parasim::strat
