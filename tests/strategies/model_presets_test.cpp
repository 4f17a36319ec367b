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
