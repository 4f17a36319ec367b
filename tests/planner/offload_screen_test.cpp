// The planner's screen under parameter offload (docs/offload.md, "Planner"): FSDP2's
// CPUOffloadPolicy and ZeRO-Infinity's offload_param take their state off the HBM floor and add
// the builder's host-link copies (fsdp2_host_copy_bytes, zero3_partition_h2d_bytes,
// host_copy_time) and the CPU step to the estimate, which then errs as without offload.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "planner/cost_models.hpp"
#include "planner/planner.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/registry/scenario_rules.hpp"

namespace parasim::plan {
namespace {

// A 4-layer Llama on one DGX H100 node, one micro-batch per replica.
strat::Scenario base_of(const std::string& parallel, const std::string& framework) {
  return strat::parse_scenario(R"({
    "name": "small-offload",
    "model": {"layers": 4, "hidden": 2048, "heads": 16, "kv_heads": 4, "ffn_hidden": 5632,
              "vocab": 32000, "seq_len": 4096, "mlp": "swiglu", "norm": "rmsnorm",
              "dropout": false},
    "cluster": "dgx-h100",
    "training": {"global_batch": 8, "micro_batch": 1, "attention": "flash",
                 "framework": ")" + framework +
                                   R"("},
    "parallel": )" + parallel + R"(,
    "optimizer": {"name": "adamw"}
  })",
                               "offload.json");
}

// The model's parameters on one rank (tp 1, pp 1), by the builder's counts.
double parameters(const strat::Scenario& sc) {
  return sc.model.layers * strat::layer_params_per_tp_rank(sc.model, 1) +
         strat::embedding_params_per_tp_rank(sc.model, 1, 0, 0);
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
  s->space = make_search_space(s->base, nullptr, o, "offload.json");
  s->owned = make_space_cost_models(s->base, s->space, nullptr);
  return s;
}

// Every offloading layout of the space against the same layout without offload on the screen;
// the first one simulated too.
void check_offload(Space& s, cost::OffloadFlavour flavour, double state_bytes_per_gpu) {
  Screen screen(s.base, s.owned.view);
  const SpaceFacts facts = space_facts(s.space);
  int found = 0;
  for (std::uint64_t i = 0; i < s.space.size(); ++i) {
    Screened off;
    off.index = i;
    off.candidate = s.space.decode(i);
    if (off.candidate.offload != flavour) continue;
    if (check_reason(s.base, off.candidate, facts) != Reason::kOk) continue;
    off.estimate = screen.estimate(off.candidate);
    Candidate none = off.candidate;
    none.offload = cost::OffloadFlavour::kNone;
    const Estimate plain = screen.estimate(none);
    INFO(describe(off.candidate));
    // The HBM floor loses the offloaded state, nothing else.
    CHECK(plain.peak_bytes - off.estimate.peak_bytes ==
          doctest::Approx(state_bytes_per_gpu).epsilon(1e-9));
    // The copies and the CPU step cost time.
    CHECK(off.estimate.step_s > plain.step_s);
    if (found++ == 0) {
      const Simulated sim = simulate_candidate(s.base, off, s.owned.view, 1e30);
      Screened twin = off;
      twin.candidate = none;
      twin.estimate = plain;
      const Simulated sim_plain = simulate_candidate(s.base, twin, s.owned.view, 1e30);
      // The screen's error with offload stays that of the same layout without it: the CPU
      // step and the copies (more than half of these steps) are priced as the builder emits them.
      CHECK(off.estimate.step_s > 1.5 * plain.step_s);
      CAPTURE(sim.screen_error);
      CAPTURE(sim_plain.screen_error);
      CHECK(std::fabs(sim.screen_error - sim_plain.screen_error) < 0.02);
    }
  }
  CHECK(found > 0);
}

}  // namespace

TEST_CASE("screen: FSDP2's CPU offload takes the 16 B shard off HBM and adds its copies") {
  auto s = space_of(base_of(R"({"dp": 8, "sharding": "fsdp2", "offload": "fsdp2"})", "torchtitan"),
                    {"sharding=fsdp2", "offload=none,fsdp2", "dp=8", "tp=1", "pp=1", "cp=1",
                     "micro_batch=1", "gpus=8"});
  // The parameters per GPU as the builder counts them (their hand counts are in
  // tests/strategies/fsdp2_offload_test.cpp): 16 B each over the shard of 8.
  const double params = parameters(s->base);
  check_offload(*s, cost::OffloadFlavour::kFsdp2, 16 * params / 8);
}

TEST_CASE("screen: ZeRO-Infinity takes 16-bit parameters and the optimizer state off HBM") {
  auto s = space_of(base_of(R"({"dp": 8, "zero_stage": 3, "offload": "deepspeed",
                               "offload_params": true})",
                            "deepspeed"),
                    {"zero_stage=3", "offload=none,deepspeed", "dp=8", "tp=1", "pp=1", "cp=1",
                     "micro_batch=1", "gpus=8"});
  const double params = parameters(s->base);
  // ZeRO-3's 16-bit weights, 16-bit gradient partition and 12 B of optimizer state, over 8.
  check_offload(*s, cost::OffloadFlavour::kDeepSpeed, 16 * params / 8);
}

}  // namespace parasim::plan
