// The planner's torch.compile axis (search.compile): off and on where the framework runs
// torchtitan's dense block, the scenario's own elsewhere; compiled candidates with cp too;
// the screen tells compiled from eager candidates; a plan that turns compile on writes it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "../support/test_support.hpp"
#include "planner/candidate.hpp"
#include "planner/cost_models.hpp"
#include "planner/plan_scenario.hpp"
#include "planner/planner.hpp"
#include "planner/rules.hpp"
#include "planner/search_space.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {

TEST_CASE("the compile axis: both for torchtitan's block, with cp too, written by a plan") {
  const std::string text =
      test::read_text(test::kSourceDir / "scenarios" / "llama3-8b-fsdp2-8gpu.json");
  const strat::Scenario titan = strat::parse_scenario(text, "t.json");
  const strat::Scenario gpt = strat::parse_scenario(
      test::read_text(test::kSourceDir / "scenarios" / "gpt2-medium-gpipe.json"), "g.json");
  SearchOptions so;
  so.flags = {"micro_batch=1"};
  const SearchSpace space = make_search_space(titan, nullptr, so, "t.json");
  CHECK(space.compiles == std::vector<bool>{false, true});
  CHECK(make_search_space(gpt, nullptr, so, "g.json").compiles == std::vector<bool>{false});
  so.flags = {"micro_batch=1", "compile=on"};
  CHECK(make_search_space(titan, nullptr, so, "t.json").compiles == std::vector<bool>{true});
  // Compiled candidates run with cp > 1 as without (torchtitan's CP under compile).
  const SpaceFacts facts = space_facts(space);
  int compiled_cp_ok = 0, compiled_ok = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const Candidate c = space.decode(i);
    if (!c.compile) continue;
    const bool ok = check_reason(titan, c, facts) == Reason::kOk;
    (c.cp > 1 ? compiled_cp_ok : compiled_ok) += ok;
  }
  CHECK(compiled_cp_ok > 0);
  CHECK(compiled_ok > 0);
  // The candidate's compile reaches its scenario and the plan's scenario file.
  Candidate c = candidate_of(titan);
  CHECK_FALSE(c.compile);
  c.compile = true;
  CHECK(apply_candidate(titan, c).training.framework.compile.enabled);
  const nlohmann::json doc = nlohmann::json::parse(text);
  const nlohmann::json planned = scenario_json(doc, titan, c);
  CHECK(planned["training"]["framework"]["preset"] == "torchtitan");
  CHECK(planned["training"]["framework"]["compile"] == true);
  CHECK(strat::parse_scenario(planned.dump(), "p.json").training.framework.compile.enabled);
  CHECK(describe(c).find(" compile") != std::string::npos);
}

TEST_CASE("the screen tells compiled from eager candidates, each near its simulation") {
  const strat::Scenario titan = strat::parse_scenario(
      test::read_text(test::kSourceDir / "scenarios" / "llama3-8b-fsdp2-8gpu.json"), "t.json");
  SearchOptions so;
  so.flags = {"micro_batch=1", "dp=8", "tp=1", "pp=1", "recompute=full"};
  const SearchSpace space = make_search_space(titan, nullptr, so, "t.json");
  const SpaceCostModels costs = make_space_cost_models(titan, space, nullptr);
  Screen screen(titan, costs.view);  // one screen for both: its caches must keep them apart
  const SpaceFacts facts = space_facts(space);
  double eager = 0, compiled = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    Screened sc;
    sc.index = i;
    sc.candidate = space.decode(i);
    if (check_reason(titan, sc.candidate, facts) != Reason::kOk || !sc.candidate.fsdp2) continue;
    sc.estimate = screen.estimate(sc.candidate);
    const Simulated sim = simulate_candidate(titan, sc, costs.view, 1e30);
    INFO(describe(sc.candidate));
    CHECK(std::fabs(sim.screen_error) < 0.05);
    (sc.candidate.compile ? compiled : eager) = sc.estimate.step_s;
  }
  REQUIRE(eager > 0);
  REQUIRE(compiled > 0);
  CHECK(compiled < eager);
}

}  // namespace parasim::plan
