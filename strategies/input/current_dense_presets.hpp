#pragma once
// parasim::strat the dense model presets of 2024-25 (Llama 3, 3.1 and 3.2; Qwen2.5 and Qwen3
// dense; Mistral 7B v0.3 and Mistral NeMo 12B), appended to the preset table by
// model_presets.cpp. Internal to the preset table; each entry's source names the model card or
// config.json its shape comes from, and tests/strategies/model_presets_test.cpp checks each
// total against its published count where the publisher gives one. Not here: Gemma 2 / 3 (their
// sliding-window layers and attention-logit soft-capping are not expressible: every layer here
// attends to the whole sequence) and Mistral 7B v0.1 (sliding window 4096).

#include <vector>

#include "strategies/input/model_presets.hpp"

namespace parasim::strat {

void append_current_dense_presets(std::vector<ModelPreset>& presets);

}  // namespace parasim::strat
