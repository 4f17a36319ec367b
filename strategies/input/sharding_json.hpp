#pragma once
// parasim::strat `parallel.sharding`, `parallel.zero_stage` and `parallel.fsdp`
// (docs/scenario.md, docs/pytorch-native.md). Internal to the scenario parser.

#include <nlohmann/json.hpp>

#include "costmodel/diagnostics.hpp"
#include "costmodel/json_fields.hpp"
#include "strategies/registry/registry.hpp"

namespace parasim::strat {

// The sharding entry the scenario chooses by name (sharding) or stage (zero_stage); both only
// when they agree (fsdp2 with zero_stage 3); nullptr when neither is given or on a problem.
const Entry* chosen_sharding(cost::JsonObjectReader& r, cost::Diagnostics& d);
// FSDP2's options into `f`, every problem at its path under /parallel/fsdp.
void read_fsdp(const nlohmann::json& node, cost::Diagnostics& d, Fsdp2Spec& f);

}  // namespace parasim::strat
