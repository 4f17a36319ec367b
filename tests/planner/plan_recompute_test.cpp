// The planner's recompute axis: per-op searched for torchtitan or when named, its candidates
// refused by the per-op entry's rules where torchtitan's policy is not modelled.
#include <doctest/doctest.h>

#include <algorithm>

#include "../support/test_support.hpp"
#include "planner/candidate.hpp"
#include "planner/rules.hpp"
#include "planner/search_space.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {

TEST_CASE(
    "per-op is in the recompute axis for torchtitan or when named, refused where unmodelled") {
  const strat::Scenario gpt = strat::parse_scenario(
      test::read_text(test::kSourceDir / "scenarios" / "gpt2-medium-gpipe.json"), "g.json");
  auto has_per_op = [](const SearchSpace& s) {
    return std::find(s.recomputes.begin(), s.recomputes.end(), cost::Recompute::kPerOp) !=
           s.recomputes.end();
  };
  SearchOptions so;
  so.flags = {"micro_batch=1"};
  CHECK_FALSE(has_per_op(make_search_space(gpt, nullptr, so, "g.json")));
  so.per_op_recompute = true;
  const SearchSpace space = make_search_space(gpt, nullptr, so, "g.json");
  REQUIRE(has_per_op(space));
  so.per_op_recompute = false;
  so.flags = {"micro_batch=1", "recompute=per-op,none"};
  CHECK(has_per_op(make_search_space(gpt, nullptr, so, "g.json")));
  // GPT-2 has dropout and biases: every per-op candidate is refused, the others are not all.
  const SpaceFacts facts = space_facts(space);
  int per_op_ok = 0, others_ok = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const Candidate c = space.decode(i);
    const bool ok = check_reason(gpt, c, facts) == Reason::kOk;
    if (c.recompute == cost::Recompute::kPerOp)
      per_op_ok += ok;
    else
      others_ok += ok;
  }
  CHECK(per_op_ok == 0);
  CHECK(others_ok > 0);
}

}  // namespace parasim::plan
