// The planner with Megatron's DDP layout and --overlap-param-gather
// (strategies/data_parallel/megatron_buckets.hpp): its fast rules are validate's, and the screen
// costs the buckets and the overlapped gathers with the builder's function.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "costmodel/diagnostics.hpp"
#include "planner/cost_models.hpp"
#include "planner/planner.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/registry/scenario_rules.hpp"
#include "rules_agreement.hpp"

namespace parasim::plan {
namespace {

// A small Llama on one 8-GPU node, Megatron's buckets, both overlaps (or neither).
strat::Scenario ddp_base(bool overlap) {
  const std::string reduction = overlap ? "overlapped" : "after-backward";
  return strat::parse_scenario(R"({
    "name": "small-llama-ddp",
    "model": {"layers": 8, "hidden": 2048, "heads": 16, "kv_heads": 4, "ffn_hidden": 5632,
              "vocab": 32000, "seq_len": 2048, "mlp": "swiglu", "norm": "rmsnorm",
              "dropout": false},
    "cluster": "dgx-h100",
    "training": {"global_batch": 16, "micro_batch": 1, "attention": "flash",
                 "framework": {"preset": "megatron-lm", "gradient_reduction": ")" +
                                   reduction + R"("}},
    "parallel": {"dp": 8, "zero_stage": 1, "dp_bucket_layout": "megatron",
                 "overlap_param_gather": )" +
                                   std::string(overlap ? "true" : "false") + R"(},
    "optimizer": {"name": "adamw"}
  })",
                               "ddp.json");
}

struct Space {
  strat::Scenario base;
  SearchSpace space;
  SpaceCostModels owned;
};

std::unique_ptr<Space> space_of(bool overlap, const std::vector<std::string>& flags) {
  auto s = std::make_unique<Space>();
  s->base = ddp_base(overlap);
  SearchOptions o;
  o.flags = flags;
  s->space = make_search_space(s->base, nullptr, o, "ddp.json");
  s->owned = make_space_cost_models(s->base, s->space, nullptr);
  return s;
}

}  // namespace

TEST_CASE("Megatron's DDP overlaps: the fast rules accept exactly what validate accepts") {
  auto s = space_of(true, {"zero_stage=0,1,2,3", "chunks=1,2", "pp=1,2", "micro_batch=1",
                           "schedule=1f1b,interleaved-1f1b,zb-h1"});
  int ok = 0, refused = 0;
  test::check_rules_agree_with_validate(s->base, s->space, [&](const Candidate& c, bool accepted) {
    (accepted ? ok : refused) += 1;
    if (accepted) CHECK(c.zero_stage == 1);  // the distributed optimizer only
  });
  CHECK(ok > 5);
  CHECK(refused > 20);
}

TEST_CASE("Megatron's DDP overlaps: screen and simulation agree, and both see the overlap") {
  for (bool overlap : {false, true}) {
    auto s = space_of(overlap, {"pp=1,2", "tp=1,2", "cp=1", "micro_batch=1", "chunks=1",
                                "schedule=1f1b", "recompute=none", "tp_placement=megatron"});
    const CostModels costs = s->owned.view;
    Screen screen(s->base, costs);
    const SpaceFacts facts = space_facts(s->space);
    int n = 0;
    for (std::uint64_t i = 0; i < s->space.size(); ++i) {
      Screened sc;
      sc.index = i;
      sc.candidate = s->space.decode(i);
      if (check_reason(s->base, sc.candidate, facts) != Reason::kOk) continue;
      sc.estimate = screen.estimate(sc.candidate);
      const Simulated sim = simulate_candidate(s->base, sc, costs, 1e30);
      REQUIRE(sim.ran);
      INFO(describe(sc.candidate), " overlap ", overlap);
      CHECK(std::fabs(sim.screen_error) < 0.08);
      ++n;
    }
    CHECK(n >= 2);
  }
  // The same candidate with and without the overlaps: both tiers faster with them.
  auto off =
      space_of(false, {"pp=1", "tp=1", "cp=1", "micro_batch=1", "chunks=1", "recompute=none"});
  auto on = space_of(true, {"pp=1", "tp=1", "cp=1", "micro_batch=1", "chunks=1", "recompute=none"});
  REQUIRE(off->space.size() == on->space.size());
  Screen screen_off(off->base, off->owned.view), screen_on(on->base, on->owned.view);
  const SpaceFacts facts = space_facts(on->space);
  int compared = 0;
  for (std::uint64_t i = 0; i < on->space.size(); ++i) {
    Screened a, b;
    a.index = b.index = i;
    a.candidate = off->space.decode(i);
    b.candidate = on->space.decode(i);
    if (check_reason(on->base, b.candidate, facts) != Reason::kOk) continue;
    a.estimate = screen_off.estimate(a.candidate);
    b.estimate = screen_on.estimate(b.candidate);
    INFO(describe(b.candidate));
    CHECK(b.estimate.step_s < a.estimate.step_s);
    CHECK(b.estimate.exposed_comm_s < a.estimate.exposed_comm_s);
    const Simulated sa = simulate_candidate(off->base, a, off->owned.view, 1e30);
    const Simulated sb = simulate_candidate(on->base, b, on->owned.view, 1e30);
    CHECK(sb.report.step_time_s < sa.report.step_time_s);
    ++compared;
  }
  CHECK(compared >= 1);
}

}  // namespace parasim::plan
