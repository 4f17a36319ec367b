#pragma once
// parasim::strat uneven pipeline stages in the scenario (docs/scenario.md, `parallel`):
// `stage_layers` (one layer count per stage, per virtual stage with interleaving) and Megatron-LM's
// first/last stage counts (--decoder-first-pipeline-num-layers /
// --decoder-last-pipeline-num-layers), which become stage_layers once the model's layer count is
// known. Internal to the scenario parser.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "costmodel/diagnostics.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::strat {

// Megatron-LM's first / last stage layer counts as read, before the model is known.
struct EdgeStageLayers {
  std::optional<std::int64_t> first, last;
};

// Reads `parallel.stage_layers` at `path` into p.stage_layers (every problem into d).
void read_stage_layers(const nlohmann::json& node, const std::string& path, cost::Diagnostics& d,
                       const ScenarioLimits& limits, ParallelSpec& p);

// Megatron-LM's uneven split (megatron/core/transformer/transformer_block.py,
// get_transformer_layer_offset): the first and/or last stage hold the given counts, the other
// stages share the rest evenly; written into s.parallel.stage_layers, problems into d.
void resolve_stage_layers(const EdgeStageLayers& edge, cost::Diagnostics& d, Scenario& s);

}  // namespace parasim::strat
