#include "strategies/input/model_presets.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>

namespace parasim::strat {
namespace {

const ModelSpec& spec(const char* name) {
  const ModelPreset* p = find_model_preset(name);
  REQUIRE(p != nullptr);
  return p->spec;
}

double rel_diff(double a, double b) {
  return std::fabs(a - b) / std::fabs(b);
}

}  // namespace

TEST_CASE("model presets are well formed, uniquely named and findable") {
  REQUIRE(model_presets().size() >= 5);
  std::set<std::string> names;
  for (const ModelPreset& p : model_presets()) {
    CAPTURE(p.name);
    const ModelSpec& m = p.spec;
    CHECK(names.insert(p.name).second);
    CHECK(find_model_preset(p.name) == &p);
    CHECK(m.name == p.name);
    CHECK(!p.description.empty());
    CHECK(!p.source.empty());
    CHECK(m.layers > 0);
    CHECK(m.hidden > 0);
    CHECK(m.heads > 0);
    CHECK(m.kv_heads > 0);
    CHECK(m.ffn_hidden > 0);
    CHECK(m.vocab > 0);
    CHECK(m.seq_len > 0);
    CHECK(m.hidden % m.heads == 0);
    CHECK(m.heads % m.kv_heads == 0);
  }
  CHECK(find_model_preset("llama2-7b ") == nullptr);
  CHECK(find_model_preset("unknown") == nullptr);
}

TEST_CASE("Llama 2 parameter counts match the Hugging Face checkpoints exactly") {
  CHECK(spec("llama2-7b").total_params() == std::int64_t{6'738'415'616});
  CHECK(spec("llama2-13b").total_params() == std::int64_t{13'015'864'320});
  CHECK(spec("llama2-70b").total_params() == std::int64_t{68'976'648'192});
}

TEST_CASE("GPT parameter counts are within 0.5% of the published sizes") {
  // Hugging Face gpt2-medium has 354,823,168 parameters, learned positions included.
  const ModelSpec& gpt2 = spec("gpt2-medium");
  CHECK(gpt2.total_params() == std::int64_t{354'823'168});
  CHECK(rel_diff(static_cast<double>(spec("gpt3-175b").total_params()), 174.6e9) < 0.005);
}

TEST_CASE("preset layouts follow their families") {
  const ModelSpec& gpt2 = spec("gpt2-medium");
  CHECK(gpt2.mlp == MlpKind::kGelu);
  CHECK(gpt2.norm == NormKind::kLayerNorm);
  CHECK(gpt2.tied_embeddings);
  CHECK(gpt2.dropout);
  CHECK(gpt2.linear_bias);
  CHECK(gpt2.ffn_hidden == 4096);
  CHECK(gpt2.vocab == 50257);

  const ModelSpec& gpt3 = spec("gpt3-175b");
  CHECK(gpt3.head_dim() == 128);
  CHECK(gpt3.seq_len == 2048);

  const ModelSpec& llama70 = spec("llama2-70b");
  CHECK(llama70.mlp == MlpKind::kSwiglu);
  CHECK(llama70.norm == NormKind::kRmsNorm);
  CHECK(!llama70.tied_embeddings);
  CHECK(!llama70.dropout);
  CHECK(!llama70.linear_bias);
  CHECK(llama70.kv_heads == 8);
  CHECK(llama70.head_dim() == 128);
  CHECK(llama70.seq_len == 4096);
}

}  // namespace parasim::strat

namespace parasim::strat {

TEST_CASE("2024-25 dense presets: counts from their shapes by hand, and the published sizes") {
  struct Case {
    const char* name;
    double published;  // the publisher's count (model card or paper), 0: none stated
    double tolerance;  // the published figure's rounding
  };
  for (const Case& c : {Case{"llama3-8b", 8.03e9, 0.001}, Case{"llama3-70b", 70.6e9, 0.001},
                        Case{"llama3.1-8b", 8.03e9, 0.001}, Case{"llama3.1-70b", 70.6e9, 0.001},
                        Case{"llama3.1-405b", 405e9, 0.005}, Case{"llama3.2-1b", 1.23e9, 0.006},
                        Case{"llama3.2-3b", 3.21e9, 0.002}, Case{"qwen2.5-7b", 7.61e9, 0.001},
                        Case{"qwen2.5-14b", 14.7e9, 0.005}, Case{"qwen2.5-32b", 32.5e9, 0.01},
                        Case{"qwen2.5-72b", 72.7e9, 0.001}, Case{"qwen3-8b", 8.2e9, 0.002},
                        Case{"qwen3-14b", 14.8e9, 0.003}, Case{"qwen3-32b", 32.8e9, 0.002},
                        Case{"mistral-7b", 7.3e9, 0.01}, Case{"mistral-nemo-12b", 12e9, 0.03}}) {
    CAPTURE(c.name);
    const ModelSpec& m = spec(c.name);
    // By hand: embeddings (x2 untied), final norm, per layer Q K V O, SwiGLU's three matrices,
    // two norms, QKV biases (Qwen2.5), per-head q/k norms (Qwen3).
    const double h = m.hidden, d = m.head_dim(), q = m.heads * d, kv = m.kv_heads * d;
    const double f = m.ffn_hidden, V = m.vocab;
    double layer = h * q + 2 * h * kv + q * h + 3 * h * f + 2 * h;
    if (m.qkv_bias) layer += q + 2 * kv;
    if (m.qk_norm == QkNorm::kPerHead) layer += 2 * d;
    const double total = V * h * (m.tied_embeddings ? 1 : 2) + h + m.layers * layer;
    CHECK(static_cast<double>(m.total_params()) == total);
    if (c.published > 0) CHECK(rel_diff(total, c.published) <= c.tolerance);
  }
  // The shapes as published: Llama 3.2 ties its embeddings, Qwen2.5 has QKV biases only, Qwen3
  // heads of 128 with q/k norms, NeMo heads of 128 on hidden 5120.
  CHECK(spec("llama3.2-1b").tied_embeddings);
  CHECK(spec("llama3.2-1b").head_dim() == 64);
  CHECK_FALSE(spec("llama3.1-405b").tied_embeddings);
  CHECK(spec("qwen2.5-72b").qkv_bias);
  CHECK_FALSE(spec("qwen2.5-72b").linear_bias);
  CHECK(spec("qwen3-32b").query_width() == 8192);
  CHECK(spec("mistral-nemo-12b").head_dim() == 128);
}

}  // namespace parasim::strat
