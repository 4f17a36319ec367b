#pragma once
// The planner's fast rules (planner/rules.hpp, check_reason) against validate
// (strat::check_scenario) over a search space: for every candidate the rules do not call a
// duplicate, the rules accept it exactly when validate does. `seen(candidate, accepted)` is called
// for each such candidate, so a test can count what it meant to cover.
#include <doctest/doctest.h>

#include <cstdint>

#include "costmodel/diagnostics.hpp"
#include "planner/planner.hpp"
#include "strategies/registry/scenario_rules.hpp"

namespace parasim::test {

template <class Seen>
void check_rules_agree_with_validate(const strat::Scenario& base, const plan::SearchSpace& space,
                                     Seen seen) {
  const plan::SpaceFacts facts = plan::space_facts(space);
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const plan::Candidate c = space.decode(i);
    const plan::Reason r = plan::check_reason(base, c, facts);
    if (r == plan::Reason::kDuplicate) continue;
    cost::Diagnostics d("x");
    strat::check_scenario(plan::apply_candidate(base, c), d);
    INFO(plan::describe(c));
    CHECK((r == plan::Reason::kOk) == d.ok());
    seen(c, r == plan::Reason::kOk);
  }
}

}  // namespace parasim::test
