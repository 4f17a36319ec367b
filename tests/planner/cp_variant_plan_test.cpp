// The planner's cp_variant axis (docs/context-parallel.md): its rules are validate's, and the
// screen costs a2a from the builder's own layer program (strategies/layers/cp_attention.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "costmodel/diagnostics.hpp"
#include "planner/cost_models.hpp"
#include "planner/planner.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/registry/scenario_rules.hpp"

namespace parasim::plan {
namespace {

using nlohmann::json;

// A small Llama with 16 heads and 4 K/V heads on one 8-GPU node, written with a2a+p2p.
strat::Scenario cp_base() {
  return strat::parse_scenario(R"({
    "name": "small-llama-cp",
    "model": {"layers": 4, "hidden": 2048, "heads": 16, "kv_heads": 4, "ffn_hidden": 5632,
              "vocab": 32000, "seq_len": 8192, "mlp": "swiglu", "norm": "rmsnorm",
              "dropout": false},
    "cluster": "dgx-h100",
    "training": {"global_batch": 8, "micro_batch": 1, "attention": "flash"},
    "parallel": {"dp": 2, "cp": 4, "cp_variant": "a2a+p2p", "cp_a2a_size": 2},
    "optimizer": {"name": "adamw"}
  })",
                               "cp.json");
}

struct Space {
  strat::Scenario base = cp_base();
  SearchSpace space;
  SpaceCostModels owned;
};

std::unique_ptr<Space> space_of(const std::vector<std::string>& flags) {
  auto s = std::make_unique<Space>();
  SearchOptions o;
  o.flags = flags;
  s->space = make_search_space(s->base, nullptr, o, "cp.json");
  s->owned = make_space_cost_models(s->base, s->space, nullptr);
  return s;
}

}  // namespace

TEST_CASE("cp_variant: the scenario's own by default, every entry when listed") {
  auto own = space_of({});
  REQUIRE(own->space.cp_comms.size() == 1);
  CHECK(own->space.cp_comms.front() == strat::CpComm::kAllToAllP2p);
  CHECK(own->space.cp_a2a_size == 2);
  auto all = space_of({"cp_variant=ring,allgather,a2a,a2a+p2p"});
  CHECK(all->space.cp_comms.size() == 4);
}

TEST_CASE("cp_variant: the fast rules accept exactly what validate accepts") {
  auto s = space_of({"cp_variant=ring,allgather,a2a,a2a+p2p", "cp=1,2,4,8", "pp=1", "micro_batch=1",
                     "zero_stage=0", "chunks=1"});
  const SpaceFacts facts = space_facts(s->space);
  int checked = 0, a2a_ok = 0, a2a_refused = 0;
  for (std::uint64_t i = 0; i < s->space.size(); ++i) {
    const Candidate c = s->space.decode(i);
    const Reason r = check_reason(s->base, c, facts);
    // At cp 1 the variants are one run: only the first is kept.
    if (c.cp == 1 && c.cp_comm != s->space.cp_comms.front()) CHECK(r == Reason::kDuplicate);
    if (r == Reason::kDuplicate) continue;
    cost::Diagnostics d("x");
    strat::check_scenario(apply_candidate(s->base, c), d);
    INFO(describe(c), " cp_comm ", static_cast<int>(c.cp_comm), " a2a ", c.cp_a2a_size);
    CHECK((r == Reason::kOk) == d.ok());
    ++checked;
    if (c.cp > 1 && c.cp_comm == strat::CpComm::kAllToAll) {
      (r == Reason::kOk ? a2a_ok : a2a_refused) += 1;
    }
  }
  CHECK(checked > 20);
  CHECK(a2a_ok > 0);
  CHECK(a2a_refused > 0);  // tp 1, cp 8: 4 K/V heads over 8 ranks
}

TEST_CASE("cp_variant: the screen costs a2a as the simulation does (nothing overlaps)") {
  auto s = space_of({"cp_variant=a2a,ring", "cp=2,4", "dp=1", "pp=1", "tp=1,2", "micro_batch=1",
                     "zero_stage=0", "chunks=1", "gpus=2,4,8"});
  Screen screen(s->base, s->owned.view);
  const SpaceFacts facts = space_facts(s->space);
  int a2a = 0;
  for (std::uint64_t i = 0; i < s->space.size(); ++i) {
    Screened sc;
    sc.index = i;
    sc.candidate = s->space.decode(i);
    if (check_reason(s->base, sc.candidate, facts) != Reason::kOk) continue;
    sc.estimate = screen.estimate(sc.candidate);
    if (sc.candidate.cp_comm != strat::CpComm::kAllToAll) continue;
    const Simulated sim = simulate_candidate(s->base, sc, s->owned.view, 1e30);
    INFO(describe(sc.candidate));
    CHECK(std::fabs(sim.screen_error) < 0.05);
    // The screen reads the variant: the ring's estimate of the same layout differs.
    Candidate ring = sc.candidate;
    ring.cp_comm = strat::CpComm::kRing;
    CHECK(screen.estimate(ring).step_s != sc.estimate.step_s);
    ++a2a;
  }
  CHECK(a2a >= 3);
}

}  // namespace parasim::plan
