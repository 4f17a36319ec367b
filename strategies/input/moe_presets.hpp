#pragma once
// parasim::strat the mixture-of-experts model presets (Mixtral, DeepSeek-V3, Qwen3-MoE, OLMoE),
// appended to the preset table by model_presets.cpp. Internal to the preset table; each entry's
// source names the config.json or paper its shape comes from, and tests/strategies/
// moe_presets_test.cpp checks each total against its published count.

#include <vector>

#include "strategies/input/model_presets.hpp"

namespace parasim::strat {

void append_moe_presets(std::vector<ModelPreset>& presets);

}  // namespace parasim::strat
