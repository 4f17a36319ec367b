// The planner: rules equal validate's, the winner equals the best of simulating every candidate
// of small spaces, memory rejects are infeasible by simulate's ledger, the screen agrees with
// the simulation where nothing overlaps, threads do not change the output, plan.json reproduces.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"
#include "cli/plan_command.hpp"
#include "cli/plan_format.hpp"
#include "costmodel/profile.hpp"
#include "planner/plan_scenario.hpp"
#include "planner/cost_models.hpp"
#include "planner/planner.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {
namespace {

using nlohmann::json;

// A small dense GPT and a small Llama with grouped-query attention, on one 8-GPU node.
json gpt_document() {
  return json::parse(R"({
    "name": "small-gpt",
    "model": {"layers": 8, "hidden": 1024, "heads": 16, "vocab": 32000, "seq_len": 1024},
    "cluster": "dgx-a100-80gb",
    "training": {"global_batch": 32, "micro_batch": 1},
    "parallel": {"dp": 8},
    "optimizer": {"name": "adamw"}
  })");
}
json llama_document() {
  return json::parse(R"({
    "name": "small-llama-gqa",
    "model": {"layers": 8, "hidden": 2048, "heads": 16, "kv_heads": 4, "ffn_hidden": 5632,
              "vocab": 32000, "seq_len": 2048, "mlp": "swiglu", "norm": "rmsnorm",
              "dropout": false},
    "cluster": "dgx-h100",
    "training": {"global_batch": 16, "micro_batch": 1},
    "parallel": {"dp": 8},
    "optimizer": {"name": "adamw"}
  })");
}

// A small mixture of experts: 8 experts of 1024, top-2, the first layer dense, on 8 H100s.
json moe_document() {
  return json::parse(R"({
    "name": "small-moe",
    "model": {"layers": 8, "hidden": 1024, "heads": 16, "kv_heads": 4, "ffn_hidden": 4096,
              "vocab": 32000, "seq_len": 2048, "mlp": "swiglu", "norm": "rmsnorm",
              "dropout": false, "linear_bias": false,
              "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 1024,
                      "first_dense_layers": 1}},
    "cluster": "dgx-h100",
    "training": {"global_batch": 16, "micro_batch": 1, "attention": "flash"},
    "parallel": {"dp": 8, "ep": 8},
    "optimizer": {"name": "adamw"}
  })");
}

struct Setup {
  strat::Scenario base;
  SpaceCostModels owned;
  CostModels costs;
  SearchSpace space;
};

std::unique_ptr<Setup> setup(const json& doc, const std::vector<std::string>& flags = {},
                             bool allow_async = false) {
  auto s = std::make_unique<Setup>();
  s->base = strat::parse_scenario(doc.dump(), "test.json");
  SearchOptions so;
  so.flags = flags;
  so.allow_async = allow_async;
  const json* search = doc.contains("search") ? &doc["search"] : nullptr;
  s->space = make_search_space(s->base, search, so, "test.json");
  s->owned = make_space_cost_models(s->base, s->space, nullptr);
  s->costs = s->owned.view;
  return s;
}

bool planner_own(Reason r) { return r == Reason::kDuplicate || r == Reason::kStaleness; }

TEST_CASE("the fast rules accept exactly what validate accepts") {
  for (const json& doc : {gpt_document(), llama_document(), moe_document()}) {
    const bool moe = doc["name"] == "small-moe";
    auto s =
        setup(doc,
              moe ? std::vector<std::string>{"micro_batch=1,2", "chunks=1,2", "ep=1,2,3,4,8,16",
                                             "moe_dispatcher=alltoall,allgather"}
                  : std::vector<std::string>{"micro_batch=1,2,4", "chunks=1,2,4"},
              true);
    int checked = 0, valid = 0;
    for (std::uint64_t i = 0; i < s->space.size(); ++i) {
      const Candidate c = s->space.decode(i);
      SpaceFacts facts = space_facts(s->space);
      facts.none_searched = false;  // flash + selective kept: validate accepts it
      const Reason r = check_reason(s->base, c, facts);
      if (planner_own(r)) continue;
      cost::Diagnostics d("x");
      strat::check_scenario(apply_candidate(s->base, c), d);
      INFO(describe(c), " reason ", std::string(reason_text(r)));
      CHECK((r == Reason::kOk) == d.ok());
      ++checked;
      valid += r == Reason::kOk;
    }
    CHECK(checked > 1000);
    CHECK(valid > 50);
  }
}

// The best of simulating every valid candidate, by simulate's own ledger and step time.
std::optional<Simulated> exhaustive_best(const Setup& s, double limit, int* feasible) {
  std::optional<Simulated> best;
  *feasible = 0;
  Screen screen(s.base, s.costs);
  for (std::uint64_t i = 0; i < s.space.size(); ++i) {
    Screened sc;
    sc.index = i;
    sc.candidate = s.space.decode(i);
    if (check_reason(s.base, sc.candidate, space_facts(s.space)) !=
        Reason::kOk) {
      continue;
    }
    sc.estimate = screen.estimate(sc.candidate);
    const Simulated sim = simulate_candidate(s.base, sc, s.costs, limit);
    // The builder refuses a zb-1p/zb-2p whose limit no order fits; the screen says so first.
    CHECK(sim.ran != sc.estimate.schedule_refused);
    if (!sim.ran || !sim.fits) {
      continue;
    }
    ++*feasible;
    if (!best || sim.report.step_time_s < best->report.step_time_s) best = sim;
  }
  return best;
}

void check_exhaustive(const json& doc, const std::vector<std::string>& flags, bool async) {
  auto s = setup(doc, flags, async);
  PlanOptions o;
  o.threads = 2;
  const PlanResult r = run_plan(s->base, s->space, s->costs, o);
  int feasible = 0;
  const auto best = exhaustive_best(*s, r.limit_bytes, &feasible);
  INFO(doc["name"], ": ", s->space.size(), " candidates, ", feasible, " feasible by simulation");
  CHECK(s->space.size() >= 100);
  REQUIRE(best.has_value());
  REQUIRE(r.ranked > 0);
  const Simulated& w = r.simulated.front();
  INFO("planner: ", describe(w.screened.candidate), " ", w.report.step_time_s, " s; exhaustive: ",
       describe(best->screened.candidate), " ", best->report.step_time_s, " s");
  CHECK(w.report.step_time_s == doctest::Approx(best->report.step_time_s).epsilon(1e-12));
}

TEST_CASE("on small spaces the winner is the best of simulating every candidate") {
  SUBCASE("dense GPT") {
    check_exhaustive(gpt_document(), {"micro_batch=1,2,4", "zero_stage=0,1", "chunks=1,2"}, false);
  }
  SUBCASE("Llama with GQA") {
    check_exhaustive(llama_document(), {"micro_batch=1,2", "zero_stage=0,1,3", "chunks=1,2",
                                        "cp=1,2"},
                     false);
  }
  SUBCASE("mixture of experts: ep and the dispatcher searched") {
    check_exhaustive(moe_document(),
                     {"micro_batch=1,2", "zero_stage=0,1", "chunks=1", "ep=1,2,4,8",
                      "moe_dispatcher=alltoall,allgather", "recompute=none,full"},
                     false);
  }
  SUBCASE("asynchronous schedules allowed") {
    check_exhaustive(gpt_document(), {"micro_batch=1,4", "zero_stage=0", "chunks=1",
                                      "schedule=1f1b,pipedream,pipedream-2bw,paci"},
                     true);
  }
}

TEST_CASE("the memory floor never rejects a candidate the simulation says fits") {
  json doc = llama_document();
  doc["cluster"] = json{{"preset", "dgx-h100"}};
  doc["training"]["global_batch"] = 64;
  auto s = setup(doc, {"micro_batch=1,4,8", "chunks=1"});
  Screen screen(s->base, s->costs);
  const double limit = s->costs.at(8).device().hbm_capacity.value * 0.2;  // a tight limit
  int rejected = 0;
  for (std::uint64_t i = 0; i < s->space.size() && rejected < 120; ++i) {
    Screened sc;
    sc.index = i;
    sc.candidate = s->space.decode(i);
    if (check_reason(s->base, sc.candidate, space_facts(s->space)) != Reason::kOk) continue;
    sc.estimate = screen.estimate(sc.candidate);
    if (sc.estimate.peak_bytes <= limit) continue;
    ++rejected;
    const Simulated sim = simulate_candidate(s->base, sc, s->costs, limit);
    INFO(describe(sc.candidate), ": floor ", sc.estimate.peak_bytes, " simulated ", sim.peak_bytes);
    CHECK(sim.peak_bytes >= sc.estimate.peak_bytes * (1 - 1e-9));
  }
  CHECK(rejected >= 50);
}

TEST_CASE("screen and simulation agree within 5 % where nothing overlaps") {
  // One pipeline stage, one replica, Megatron placement: layer steps in a chain, no data-parallel
  // overlap (TSP overlaps its weight ring with compute by design, so it is left out).
  // Also two stages with one micro-batch (the batch is one micro-batch): the passes run one
  // after another, stage by stage.
  const std::vector<std::string> one_stage = {"dp=1", "pp=1", "cp=1", "zero_stage=0",
                                              "micro_batch=1,2", "chunks=1",
                                              "tp_placement=megatron", "gpus=1,2,4,8"};
  const std::vector<std::string> two_stages = {"dp=1", "pp=2", "cp=1", "zero_stage=0",
                                               "chunks=1", "tp_placement=megatron",
                                               "gpus=2,4,8", "schedule=1f1b"};
  for (const auto& [doc, flags] :
       std::vector<std::pair<json, std::vector<std::string>>>{
           {gpt_document(), one_stage},
           {llama_document(), one_stage},
           {gpt_document(), [&two_stages] {
              auto f = two_stages;
              f.push_back("micro_batch=32");
              return f;
            }()},
           {llama_document(), [&two_stages] {
              auto f = two_stages;
              f.push_back("micro_batch=16");
              return f;
            }()}}) {
    auto s = setup(doc, flags);
    Screen screen(s->base, s->costs);
    int n = 0;
    for (std::uint64_t i = 0; i < s->space.size(); ++i) {
      Screened sc;
      sc.index = i;
      sc.candidate = s->space.decode(i);
      if (check_reason(s->base, sc.candidate, space_facts(s->space)) != Reason::kOk) {
        continue;
      }
      sc.estimate = screen.estimate(sc.candidate);
      const Simulated sim = simulate_candidate(s->base, sc, s->costs, 1e30);
      INFO(describe(sc.candidate));
      CHECK(std::fabs(sim.screen_error) < 0.05);
      ++n;
    }
    CHECK(n >= 8);
  }
}

std::string plan_outputs(const json& doc, int threads, const std::string& dir) {
  test::write_text(dir + "/s.json", doc.dump(2));
  cli::PlanCommandOptions o;
  o.scenario = dir + "/s.json";
  o.threads = threads;
  o.out = dir + "/plan.json";
  o.json = dir + "/cand.json";
  o.search = {"micro_batch=1,2,4", "chunks=1,2"};
  o.progress = false;
  std::ostringstream out, err;
  REQUIRE(cli::run_plan_command(o, out, err) == cli::kExitOk);
  CHECK(err.str().empty());
  return out.str() + test::read_text(o.out) + test::read_text(o.json);
}

TEST_CASE("the same bytes out whatever the thread count; plan.json re-simulates to its figures") {
  const std::string dir = std::string(PARASIM_BINARY_DIR) + "/planner_test_out";
  std::filesystem::create_directories(dir);
  const std::string one = plan_outputs(llama_document(), 1, dir);
  const std::string three = plan_outputs(llama_document(), 3, dir);
  CHECK(one == three);
  const json plan = json::parse(test::read_text(dir + "/plan.json"));
  cli::SimulateOptions so;
  so.scenario = dir + "/plan.json";
  so.json = dir + "/again.json";
  std::ostringstream out, err;
  REQUIRE(cli::run_simulate(so, out, err) == cli::kExitOk);
  const json again = json::parse(test::read_text(so.json));
  CHECK(again.dump() == plan["predicted"].dump());
}

TEST_CASE("bad search sections are refused with their path and nothing is written") {
  const std::string dir = std::string(PARASIM_BINARY_DIR) + "/planner_test_bad";
  std::filesystem::create_directories(dir);
  struct Bad {
    json search;
    std::vector<std::string> paths;
  };
  const std::vector<Bad> cases = {
      {json{{"tpp", {2}}}, {"/search/tpp"}},
      {json{{"tp", json::array()}}, {"/search/tp"}},
      {json{{"pp", {{"min", 4}, {"max", 2}}}}, {"/search/pp"}},
      {json{{"schedule", {"1f1b", "zigzag"}}, {"zero_stage", {5}}},
       {"/search/schedule/1", "/search/zero_stage/0"}},
      {json{{"schedule", {"pipedream"}}}, {"/search/schedule"}},
  };
  for (const Bad& b : cases) {
    json doc = gpt_document();
    doc["search"] = b.search;
    test::write_text(dir + "/s.json", doc.dump());
    std::filesystem::remove(dir + "/plan.json");
    cli::PlanCommandOptions o;
    o.scenario = dir + "/s.json";
    o.out = dir + "/plan.json";
    o.progress = false;
    std::ostringstream out, err;
    INFO(b.search.dump(), " -> ", err.str());
    CHECK(cli::run_plan_command(o, out, err) == cli::kExitBadInput);
    for (const auto& p : b.paths) CHECK(err.str().find(": " + p + ": ") != std::string::npos);
    CHECK(!std::filesystem::exists(dir + "/plan.json"));
  }
  cli::PlanCommandOptions o;
  test::write_text(dir + "/s.json", gpt_document().dump());
  o.scenario = dir + "/s.json";
  o.max_candidates = 1000;
  o.progress = false;
  std::ostringstream out, err;
  CHECK(cli::run_plan_command(o, out, err) == cli::kExitBadInput);
  CHECK(err.str().find(": /search: ") != std::string::npos);
  CHECK(err.str().find("over the limit of 1000") != std::string::npos);
}

}  // namespace
}  // namespace parasim::plan
