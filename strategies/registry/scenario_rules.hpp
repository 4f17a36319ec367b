#pragma once
// parasim::strat scenario rules — the cross-field rules of a Scenario, one rule per function:
// the rules that hold whatever strategies it chooses (scenario_rules.cpp), then the rules of the
// entries it chooses and of the parameters it sets (registry.hpp, check_entry_rules). Every
// problem is reported with the JSON path of the field a user should change; nothing stops at the
// first one.

#include "costmodel/diagnostics.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::strat {

// All of them, in a fixed order (the order problems are reported in).
void check_scenario_rules(const Scenario& scenario, cost::Diagnostics& d,
                          const ScenarioLimits& limits);

}  // namespace parasim::strat
