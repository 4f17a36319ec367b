#pragma once
// parasim::strat model.moe and model.mla in the scenario (docs/scenario.md, `model`): a mixture of
// experts and multi-head latent attention, read field by field with every problem's JSON path.
// Internal to the scenario parser.

#include <nlohmann/json.hpp>
#include <string>

#include "costmodel/diagnostics.hpp"
#include "strategies/input/model.hpp"

namespace parasim::strat {

// Reads `node` (the "moe" object at `path`) into `moe`, over what a preset set; `layers` bounds
// first_dense_layers.
void read_moe(const nlohmann::json& node, const std::string& path, cost::Diagnostics& d, int layers,
              MoeSpec& moe);
// Reads `node` (the "mla" object at `path`) into `mla`, over what a preset set.
void read_mla(const nlohmann::json& node, const std::string& path, cost::Diagnostics& d,
              MlaSpec& mla);

}  // namespace parasim::strat
