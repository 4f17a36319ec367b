#pragma once
// parasim::strat model presets — named, sourced ModelSpecs that scenarios refer to by name
// ("model": {"preset": "llama2-7b"}).
//
// Each preset's `source` names the paper and/or the Hugging Face config.json its shape comes
// from. Parameter counts follow ModelSpec::total_params(), which matches the Hugging Face counts
// exactly for the Llama 2 presets. For GPT presets it omits the learned position embeddings
// (seq_len x hidden), so it reads about 0.3% low for gpt2-medium and 0.01% low for gpt3-175b.
//
// The list is an explicit table in model_presets.cpp, in a fixed order, with unique names.

#include <string>
#include <string_view>
#include <vector>

#include "strategies/input/model.hpp"

namespace parasim::strat {

struct ModelPreset {
  std::string name;         // lookup key, "llama2-7b"; equals spec.name
  std::string description;  // one line for `--list-presets`
  std::string source;       // paper and/or config the numbers come from
  ModelSpec spec;
};

// The Llama layout the preset tables share: SwiGLU MLP of `ffn_hidden`, RMSNorm, no biases, no
// dropout, RoPE (no learned positions); `tied` output head or not.
ModelSpec llama_layout(std::string name, int layers, int hidden, int heads, int kv_heads,
                       int ffn_hidden, int vocab, int seq_len, bool tied);

// A table entry: the spec under its own name (the preset tables' one constructor).
ModelPreset make_model_preset(std::string description, std::string source, ModelSpec spec);

// All presets, in a fixed order. Built once on first use; safe to call from several threads.
const std::vector<ModelPreset>& model_presets();

// The preset with exactly this name, or nullptr.
const ModelPreset* find_model_preset(std::string_view name);

}  // namespace parasim::strat
