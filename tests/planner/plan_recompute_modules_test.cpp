// The planner with Megatron's recompute modules other than the attention core (moe_act here):
// selective with FlashAttention is then another run than none, and the selective entry's rules
// (moe_act without FP8) decide in the fast rules as in validate.
#include <doctest/doctest.h>

#include "../support/test_support.hpp"
#include "planner/planner.hpp"
#include "rules_agreement.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {

TEST_CASE("recompute modules: selective is its own run, and its rules are the fast rules'") {
  nlohmann::json doc = nlohmann::json::parse(
      test::read_text(test::kSourceDir / "scenarios" / "qwen3-30b-a3b-8gpu.json"));
  doc["training"]["recompute"] = "selective";
  doc["training"]["recompute_modules"] = {"core_attn", "moe_act"};
  const strat::Scenario base = strat::parse_scenario(doc.dump(), "modules.json");
  SearchOptions o;
  o.flags = {"recompute=none,selective", "precision=bf16,fp8:delayed", "micro_batch=1",
             "pp=1", "tp=1"};
  const SearchSpace space = make_search_space(base, nullptr, o, "modules.json");
  int selective_ok = 0, fp8_refused = 0;
  test::check_rules_agree_with_validate(base, space, [&](const Candidate& c, bool accepted) {
    if (c.recompute != cost::Recompute::kSelective) return;
    if (accepted) ++selective_ok;
    if (!accepted && c.recipe != cost::QuantRecipe::kNone) ++fp8_refused;
  });
  CHECK(selective_ok > 0);  // flash + selective with moe_act is not none's run
  CHECK(fp8_refused > 0);   // moe_act with FP8 is refused, fast and slow alike
}

}  // namespace parasim::plan
