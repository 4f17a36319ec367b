// The planner with Megatron's grouped full recompute (strategies/layers/checkpoint_groups.hpp):
// its full rows are refused where validate refuses the method, and the screen costs the
// scenario's method from the builder's own per-stage function.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "costmodel/diagnostics.hpp"
#include "planner/cost_models.hpp"
#include "planner/planner.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/registry/scenario_rules.hpp"
#include "rules_agreement.hpp"

namespace parasim::plan {
namespace {

// A small Llama (8 layers) on one 8-GPU node with the given recompute method and layer count.
strat::Scenario groups_base(const std::string& method, int layers) {
  return strat::parse_scenario(R"({
    "name": "small-llama-groups",
    "model": {"layers": 8, "hidden": 2048, "heads": 16, "kv_heads": 4, "ffn_hidden": 5632,
              "vocab": 32000, "seq_len": 4096, "mlp": "swiglu", "norm": "rmsnorm",
              "dropout": false},
    "cluster": "dgx-h100",
    "training": {"global_batch": 16, "micro_batch": 1, "attention": "flash",
                 "recompute": "full", "recompute_method": ")" +
                                   method + R"(", "recompute_num_layers": )" +
                                   std::to_string(layers) + R"(},
    "parallel": {"dp": 4, "pp": 2},
    "optimizer": {"name": "adamw"}
  })",
                               "groups.json");
}

struct Space {
  strat::Scenario base;
  SearchSpace space;
  SpaceCostModels owned;
};

std::unique_ptr<Space> space_of(strat::Scenario base, const std::vector<std::string>& flags) {
  auto s = std::make_unique<Space>();
  s->base = std::move(base);
  SearchOptions o;
  o.flags = flags;
  s->space = make_search_space(s->base, nullptr, o, "groups.json");
  s->owned = make_space_cost_models(s->base, s->space, nullptr);
  return s;
}

}  // namespace

TEST_CASE("grouped recompute: the fast rules accept exactly what validate accepts") {
  auto s = space_of(groups_base("block", 2), {"recompute=none,full", "pp=1,2,4", "zero_stage=0,3",
                                              "micro_batch=1", "tp=1,2", "chunks=1"});
  int full_ok = 0, full_refused = 0;
  test::check_rules_agree_with_validate(s->base, s->space, [&](const Candidate& c, bool accepted) {
    if (c.recompute == cost::Recompute::kFull) (accepted ? full_ok : full_refused) += 1;
  });
  CHECK(full_ok > 0);
  CHECK(full_refused > 0);  // ZeRO-3, and block 2 over the 2 layers of pp 4's stages is fine
}

TEST_CASE("every-nth: the fast rules accept exactly what validate accepts, sharded too") {
  // torchtitan's every-N-th block: FSDP2 runs it (one-layer checkpoints), DeepSpeed's ZeRO-3 and
  // interleaved chunks do not (the counter runs on across a rank's chunks).
  auto s = space_of(groups_base("every-nth", 2),
                    {"recompute=none,full", "pp=1,2", "sharding=zero-1,zero-3,fsdp2",
                     "micro_batch=1", "tp=1", "chunks=1,2", "schedule=1f1b,interleaved-1f1b"});
  int fsdp2_ok = 0, zero3_refused = 0, chunks_refused = 0;
  test::check_rules_agree_with_validate(s->base, s->space, [&](const Candidate& c, bool accepted) {
    if (c.recompute != cost::Recompute::kFull) return;
    if (accepted && c.fsdp2) ++fsdp2_ok;
    if (!accepted && c.zero_stage == 3 && !c.fsdp2) ++zero3_refused;
    if (!accepted && c.chunks > 1) ++chunks_refused;
  });
  CHECK(fsdp2_ok > 0);
  CHECK(zero3_refused > 0);
  CHECK(chunks_refused > 0);
}

TEST_CASE("grouped recompute: the screen costs the scenario's method as the simulation does") {
  struct Case {
    std::string method;
    int layers;
    std::string sharding = "zero-1";
  };
  for (const Case& k :
       std::vector<Case>{{"uniform", 1}, {"uniform", 4}, {"block", 2}, {"every-nth", 2},
                         {"every-nth", 3, "fsdp2"}}) {
    CAPTURE(k.method);
    CAPTURE(k.layers);
    CAPTURE(k.sharding);
    auto s = space_of(groups_base(k.method, k.layers),
                      {"recompute=full", "pp=2", "dp=4", "tp=1", "sharding=" + k.sharding,
                       "micro_batch=1", "schedule=1f1b", "chunks=1", "gpus=8"});
    Screen screen(s->base, s->owned.view);
    const SpaceFacts facts = space_facts(s->space);
    int simulated = 0;
    for (std::uint64_t i = 0; i < s->space.size(); ++i) {
      Screened sc;
      sc.index = i;
      sc.candidate = s->space.decode(i);
      if (check_reason(s->base, sc.candidate, facts) != Reason::kOk) continue;
      sc.estimate = screen.estimate(sc.candidate);
      const Simulated sim = simulate_candidate(s->base, sc, s->owned.view, 1e30);
      INFO(describe(sc.candidate));
      REQUIRE(sim.ran);
      CHECK(std::fabs(sim.screen_error) < 0.03);
      CHECK(sc.estimate.peak_bytes <= sim.peak_bytes);  // a floor
      ++simulated;
    }
    CHECK(simulated >= 1);
  }
  // The screen reads the method: block 2 keeps more than uniform 1 and reruns less.
  auto one =
      space_of(groups_base("uniform", 1), {"recompute=full", "pp=2", "dp=4", "tp=1", "zero_stage=1",
                                           "micro_batch=1", "chunks=1", "gpus=8"});
  auto block =
      space_of(groups_base("block", 2), {"recompute=full", "pp=2", "dp=4", "tp=1", "zero_stage=1",
                                         "micro_batch=1", "chunks=1", "gpus=8"});
  Screen s1(one->base, one->owned.view), s2(block->base, block->owned.view);
  const Candidate c = one->space.decode(0);
  REQUIRE(block->space.decode(0) == c);
  CHECK(s2.estimate(c).step_s < s1.estimate(c).step_s);
  CHECK(s2.estimate(c).peak_bytes > s1.estimate(c).peak_bytes);
}

}  // namespace parasim::plan
