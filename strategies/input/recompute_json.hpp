#pragma once
// parasim::strat `training.recompute_modules` (docs/scenario.md): Megatron's --recompute-modules
// as a list of distinct names from the registry's choices. Internal to the scenario parser.

#include <nlohmann/json.hpp>
#include <string>

#include "costmodel/activation_checkpointing.hpp"
#include "costmodel/diagnostics.hpp"

namespace parasim::strat {

// Reads the list at `path` into `out` (every problem into d): a name not among the choices, a
// repeated name, a choice parasim does not model (with the reason), or not a list of strings.
void read_recompute_modules(const nlohmann::json& node, const std::string& path,
                            cost::Diagnostics& d, cost::RecomputeModules& out);

}  // namespace parasim::strat
