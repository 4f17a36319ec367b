#include "strategies/input/moe_presets.hpp"

#include <utility>

namespace parasim::strat {
namespace {

// The Llama layout every preset here shares (model_presets.hpp); the dense width is set per
// preset.
ModelSpec moe_body(std::string name, int layers, int hidden, int heads, int kv_heads, int vocab,
                   int seq_len) {
  return llama_layout(std::move(name), layers, hidden, heads, kv_heads, 0, vocab, seq_len, false);
}

MoeSpec routed(int experts, int top_k, int expert_ffn, RouterScore score, LoadBalancing balancing) {
  MoeSpec moe;
  moe.experts = experts;
  moe.top_k = top_k;
  moe.expert_ffn_hidden = expert_ffn;
  moe.score = score;
  moe.balancing = balancing;
  return moe;
}

ModelPreset preset(std::string description, std::string source, ModelSpec spec) {
  return make_model_preset(std::move(description), std::move(source), std::move(spec));
}

ModelSpec mixtral(std::string name, int layers, int hidden, int heads, int ffn) {
  ModelSpec m = moe_body(std::move(name), layers, hidden, heads, 8, 32000, 32768);
  m.ffn_hidden = ffn;  // every layer is MoE; the dense width is the experts'
  m.moe = routed(8, 2, ffn, RouterScore::kSoftmax, LoadBalancing::kAuxLoss);
  return m;
}

ModelSpec qwen3_moe(std::string name, int layers, int hidden, int heads, int dense_ffn,
                    int expert_ffn) {
  ModelSpec m = moe_body(std::move(name), layers, hidden, heads, 4, 151936, 4096);
  m.explicit_head_dim = 128;
  m.qk_norm = QkNorm::kPerHead;
  m.ffn_hidden = dense_ffn;  // config.json's intermediate_size; no layer uses it
  m.moe = routed(128, 8, expert_ffn, RouterScore::kSoftmax, LoadBalancing::kAuxLoss);
  return m;
}

ModelSpec deepseek_v3() {
  ModelSpec m = moe_body("deepseek-v3", 61, 7168, 128, 128, 129280, 4096);
  m.ffn_hidden = 18432;  // the first three, dense layers
  m.mla = MlaSpec{1536, 512, 128, 64, 128};
  m.moe = routed(256, 8, 2048, RouterScore::kSigmoid, LoadBalancing::kExpertBias);
  m.moe.shared_experts = 1;
  m.moe.shared_ffn_hidden = 2048;
  m.moe.first_dense_layers = 3;
  m.mtp_layers = 1;
  return m;
}

ModelSpec olmoe() {
  ModelSpec m = moe_body("olmoe-1b-7b", 16, 2048, 16, 16, 50304, 4096);
  m.qk_norm = QkNorm::kFull;
  m.ffn_hidden = 1024;
  m.moe = routed(64, 8, 1024, RouterScore::kSoftmax, LoadBalancing::kAuxLoss);
  return m;
}

}  // namespace

void append_moe_presets(std::vector<ModelPreset>& presets) {
  presets.push_back(preset(
      "Mixtral 8x7B, 46.7B (12.9B active): 32 layers, hidden 4096, 32 heads, 8 KV heads, "
      "8 experts of SwiGLU 14336, top-2, context 32768",
      "Jiang et al., \"Mixtral of Experts\", arXiv:2401.04088 (2024), Table 1 (dim 4096, 32 "
      "layers, head_dim 128, hidden_dim 14336, 32 heads, 8 KV heads, context 32768, vocab "
      "32000, 8 experts, top-2); Hugging Face mistralai/Mixtral-8x7B-Instruct-v0.1 config.json "
      "(num_local_experts 8, num_experts_per_tok 2, tie_word_embeddings false). 46.7B total, "
      "12.9B active: Mistral AI, \"Mixtral of experts\" (2023-12-11).",
      mixtral("mixtral-8x7b", 32, 4096, 32, 14336)));
  presets.push_back(preset(
      "Mixtral 8x22B, 141B (39B active): 56 layers, hidden 6144, 48 heads, 8 KV heads, "
      "8 experts of SwiGLU 16384, top-2",
      "Hugging Face mistral-community/Mixtral-8x22B-v0.1 config.json (num_hidden_layers 56, "
      "hidden_size 6144, num_attention_heads 48, num_key_value_heads 8, intermediate_size "
      "16384, num_local_experts 8, num_experts_per_tok 2, vocab_size 32000, "
      "max_position_embeddings 65536); 141B total, 39B active: Mistral AI, \"Cheaper, Better, "
      "Faster, Stronger\" (2024-04-17). Preset context 32768, as 8x7B's.",
      mixtral("mixtral-8x22b", 56, 6144, 48, 16384)));
  presets.push_back(preset(
      "DeepSeek-V3, 671B (37B active) + one 11.5B MTP module: 61 layers (first 3 dense), hidden "
      "7168, MLA with 128 heads, 256 routed experts of 2048 + 1 shared, top-8, sigmoid router "
      "with bias balancing, context 4096",
      "DeepSeek-AI, \"DeepSeek-V3 Technical Report\", arXiv:2412.19437, sec. 4.2 (61 layers, "
      "hidden 7168, 128 heads of 128, KV compression 512, query compression 1536, decoupled "
      "RoPE 64, all FFNs but the first three MoE: 1 shared + 256 routed experts of 2048, 8 "
      "active, MTP depth 1, sequence 4K in pre-training) and sec. 2.1.2 (sigmoid affinities, "
      "auxiliary-loss-free bias); Hugging Face deepseek-ai/DeepSeek-V3 config.json "
      "(intermediate_size 18432, vocab_size 129280, first_k_dense_replace 3, "
      "num_nextn_predict_layers 1); README_WEIGHTS.md: 671B main model, 11.5B MTP module. "
      "Node-limited routing (4 nodes per token) and the 2.5 routed scaling are not costs.",
      deepseek_v3()));
  presets.push_back(preset(
      "Qwen3-30B-A3B, 30.5B (3.3B active): 48 layers, hidden 2048, 32 heads of 128, 4 KV heads, "
      "QK norm, 128 experts of SwiGLU 768, top-8, context 4096",
      "Hugging Face Qwen/Qwen3-30B-A3B config.json (num_hidden_layers 48, hidden_size 2048, "
      "num_attention_heads 32, num_key_value_heads 4, head_dim 128, moe_intermediate_size 768, "
      "num_experts 128, num_experts_per_tok 8, decoder_sparse_step 1, vocab_size 151936, "
      "tie_word_embeddings false) and model card (30.5B total, 3.3B activated); Qwen3 "
      "Technical Report, arXiv:2505.09388 (q/k RMSNorm per head; pre-training at 4096 tokens "
      "in its first two stages).",
      qwen3_moe("qwen3-30b-a3b", 48, 2048, 32, 6144, 768)));
  presets.push_back(preset(
      "Qwen3-235B-A22B, 235B (22B active): 94 layers, hidden 4096, 64 heads of 128, 4 KV heads, "
      "QK norm, 128 experts of SwiGLU 1536, top-8, context 4096",
      "Hugging Face Qwen/Qwen3-235B-A22B config.json (num_hidden_layers 94, hidden_size 4096, "
      "num_attention_heads 64, num_key_value_heads 4, head_dim 128, moe_intermediate_size "
      "1536, num_experts 128, num_experts_per_tok 8, vocab_size 151936) and model card (235B "
      "total, 22B activated); Qwen3 Technical Report, arXiv:2505.09388.",
      qwen3_moe("qwen3-235b-a22b", 94, 4096, 64, 12288, 1536)));
  presets.push_back(preset(
      "OLMoE-1B-7B, 6.9B (1.3B active): 16 layers, hidden 2048, 16 heads, QK norm over all "
      "heads, 64 experts of SwiGLU 1024, top-8, context 4096",
      "Muennighoff et al., \"OLMoE: Open Mixture-of-Experts Language Models\", arXiv:2409.02060 "
      "(6.9B total, 1.3B active); Hugging Face allenai/OLMoE-1B-7B-0924 config.json "
      "(num_hidden_layers 16, hidden_size 2048, num_attention_heads 16, intermediate_size "
      "1024, num_experts 64, num_experts_per_tok 8, vocab_size 50304, clip_qkv null, "
      "max_position_embeddings 4096, qk layer norm over the full width).",
      olmoe()));
}

}  // namespace parasim::strat
