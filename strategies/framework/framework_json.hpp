#pragma once
// parasim::strat read_framework — the scenario's `training.framework` (docs/scenario.md,
// Framework): a preset name, or {"preset": NAME, overrides...} where every override is checked
// (names, units, ranges) and every problem reported at its JSON path. Unknown preset names get a
// "did you mean" hint and the list of presets.

#include <nlohmann/json.hpp>
#include <string>

#include "costmodel/diagnostics.hpp"
#include "strategies/framework/framework.hpp"

namespace parasim::strat {

// Limits of the override counts (far above any framework's, a guard against typos).
inline constexpr int kMaxFrameworkCount = 10'000;

// Reads `node` (at JSON path `path`) into `out`, which starts as the default framework. A
// written-out framework without "preset" starts from the default preset too and is named
// "custom". Cross-field rules: a CUDA graph cannot contain syncs (layer.syncs must be 0 with
// cuda_graphs), and gradient_bucket and gradient_bucket_elements are exclusive.
void read_framework(const nlohmann::json& node, const std::string& path, cost::Diagnostics& d,
                    FrameworkSpec& out);

}  // namespace parasim::strat
