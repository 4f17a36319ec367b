// The planner's tp_comm_overlap axis (docs/tp-overlap.md): the trainer's overlap searched beside
// none, the fast rules agree with validate, and the screen costs the overlap from the builder's
// own layer program (strategies/layers/tp_overlap.cpp).
#include <doctest/doctest.h>

#include <algorithm>
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

using strat::TpCommOverlap;

// A Llama with large GEMMs (h 8192, f 28672) and 4 layers on one 8-GPU node, Megatron-LM.
strat::Scenario tp_base() {
  return strat::parse_scenario(R"({
    "name": "small-llama-tp",
    "model": {"layers": 4, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672,
              "vocab": 32000, "seq_len": 4096, "mlp": "swiglu", "norm": "rmsnorm",
              "dropout": false},
    "cluster": "dgx-h100",
    "training": {"global_batch": 8, "micro_batch": 1, "attention": "flash"},
    "parallel": {"dp": 1, "tp": 8, "sequence_parallel": true},
    "optimizer": {"name": "adamw"}
  })",
                               "tp.json");
}

struct Space {
  strat::Scenario base = tp_base();
  SearchSpace space;
  SpaceCostModels owned;
};

std::unique_ptr<Space> space_of(const std::vector<std::string>& flags,
                                const std::string& trainer_overlap = "") {
  auto s = std::make_unique<Space>();
  SearchOptions o;
  o.flags = flags;
  o.tp_overlap = trainer_overlap;
  s->space = make_search_space(s->base, nullptr, o, "tp.json");
  s->owned = make_space_cost_models(s->base, s->space, nullptr);
  return s;
}

bool has(const std::vector<TpCommOverlap>& v, TpCommOverlap o) {
  return std::find(v.begin(), v.end(), o) != v.end();
}

}  // namespace

TEST_CASE("tp_comm_overlap: none by default, the trainer's overlap beside it") {
  CHECK(space_of({})->space.tp_overlaps == std::vector<TpCommOverlap>{TpCommOverlap::kNone});
  const auto megatron = space_of({}, "userbuffers");  // plan --for megatron
  CHECK(megatron->space.tp_overlaps.size() == 2);
  CHECK(has(megatron->space.tp_overlaps, TpCommOverlap::kUserbuffers));
  const auto torchtitan = space_of({}, "async-tp");  // plan --for torchtitan
  CHECK(has(torchtitan->space.tp_overlaps, TpCommOverlap::kAsyncTp));
  CHECK(space_of({"tp_comm_overlap=none,async-tp,userbuffers"})->space.tp_overlaps.size() == 3);
}

TEST_CASE("tp_comm_overlap: the fast rules accept exactly what validate accepts") {
  auto s = space_of({"tp_comm_overlap=none,async-tp,userbuffers", "tp=1,2,4,8", "pp=1",
                     "micro_batch=1", "zero_stage=0", "chunks=1", "cp=1"});
  const SpaceFacts facts = space_facts(s->space);
  for (std::uint64_t i = 0; i < s->space.size(); ++i) {
    const Candidate c = s->space.decode(i);
    // Without SP (or at tp 1) an overlap chunks nothing: the run without it.
    if (c.tp_overlap != TpCommOverlap::kNone && (c.tp == 1 || !c.sequence_parallel)) {
      CHECK(check_reason(s->base, c, facts) == Reason::kDuplicate);
    }
  }
  int checked = 0, overlapped = 0;
  test::check_rules_agree_with_validate(s->base, s->space, [&](const Candidate& c, bool accepted) {
    ++checked;
    if (accepted && c.tp_overlap != TpCommOverlap::kNone) ++overlapped;
  });
  CHECK(checked > 5);
  CHECK(overlapped > 2);
}

TEST_CASE("tp_comm_overlap with FP8 recipes: the fast rules accept exactly what validate accepts") {
  // Each overlap takes its library's recipes only (async-tp torchao's, userbuffers TE's without
  // blockwise): the entry's rules, run on the candidate.
  auto s = space_of({"tp_comm_overlap=none,async-tp,userbuffers", "tp=8", "pp=1",
                     "micro_batch=1", "zero_stage=0", "chunks=1", "cp=1",
                     "sequence_parallel=true",
                     "precision=bf16,fp8:delayed,fp8:blockwise,fp8:torchao-tensorwise,"
                     "fp8:torchao-rowwise"});
  int accepted_fp8 = 0, refused_fp8 = 0;
  test::check_rules_agree_with_validate(s->base, s->space, [&](const Candidate& c, bool accepted) {
    if (c.tp_overlap == TpCommOverlap::kNone || c.recipe == cost::QuantRecipe::kNone) return;
    (accepted ? accepted_fp8 : refused_fp8) += 1;
  });
  CHECK(accepted_fp8 > 0);  // userbuffers + delayed; async-tp + torchao's
  CHECK(refused_fp8 > 0);   // async-tp + TE's, userbuffers + blockwise or torchao's
}

TEST_CASE("tp_comm_overlap: the screen costs the chunks as the simulation does") {
  auto s = space_of({"tp_comm_overlap=none,async-tp,userbuffers", "tp=8", "dp=1", "pp=1",
                     "micro_batch=1", "zero_stage=0", "chunks=1", "sequence_parallel=true",
                     "recompute=none"});
  Screen screen(s->base, s->owned.view);
  const SpaceFacts facts = space_facts(s->space);
  double none_s = 0;
  int overlapped = 0;
  for (std::uint64_t i = 0; i < s->space.size(); ++i) {
    Screened sc;
    sc.index = i;
    sc.candidate = s->space.decode(i);
    if (check_reason(s->base, sc.candidate, facts) != Reason::kOk) continue;
    sc.estimate = screen.estimate(sc.candidate);
    const Simulated sim = simulate_candidate(s->base, sc, s->owned.view, 1e30);
    INFO(describe(sc.candidate));
    CHECK(std::fabs(sim.screen_error) < 0.05);
    if (sc.candidate.tp_overlap == TpCommOverlap::kNone) {
      none_s = sc.estimate.step_s;
      continue;
    }
    Candidate serial = sc.candidate;
    serial.tp_overlap = TpCommOverlap::kNone;
    CHECK(sc.estimate.step_s < screen.estimate(serial).step_s);  // the screen reads the overlap
    ++overlapped;
  }
  CHECK(none_s > 0);
  CHECK(overlapped >= 2);
}

}  // namespace parasim::plan
