// What the planner's space holds and how its answer reads (issue 26, section 1): one layout one
// row (interleaving one chunk is 1F1B; TSP at tp 1 is the plain layout), uneven stages searched
// (Llama 3 405B's 126 layers on 16 stages), ties within the model's error named with the
// simplest row, a scenario without a layout planned, and an infeasible search explained in one
// line with the nearest GPU counts that have a layout.
#include <doctest/doctest.h>

#include <sstream>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"
#include "cli/plan_command.hpp"
#include "plan_run.hpp"
#include "planner/candidate.hpp"
#include "planner/rules.hpp"
#include "planner/search_space.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {
namespace {

using nlohmann::json;

json llama70b(int nodes, int global_batch) {
  json s = json::parse(
      test::read_text(test::kSourceDir / "scenarios" / "llama2-70b-64gpu.json"));
  s["cluster"]["nodes"] = nodes;
  s["training"]["global_batch"] = global_batch;
  s["parallel"]["dp"] = nodes * 8 / 32;
  return s;
}

using test::PlanRun;

PlanRun plan_document(const json& doc, std::vector<std::string> search = {},
                      const std::string& out_file = "", int gpus = 0) {
  test::TempDir tmp;
  const std::string path = tmp.file("s.json");
  test::write_text(path, doc.dump());
  cli::PlanCommandOptions o;
  o.scenario = path;
  o.search = std::move(search);
  o.out = out_file;
  o.gpus = gpus;
  return test::run_plan(o);
}

}  // namespace

TEST_CASE("one layout, one row: interleaving one chunk is 1f1b's row; tsp needs tp > 1") {
  const strat::Scenario base = strat::parse_scenario(llama70b(32, 512).dump(), "l.json");
  SearchOptions so;
  so.flags = {"dp=8", "tp=1,8", "micro_batch=1", "recompute=none", "zero_stage=1"};
  const SearchSpace space = make_search_space(base, nullptr, so, "l.json");
  const SpaceFacts facts = space_facts(space);
  int interleaved_one = 0, tsp_tp1 = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const Candidate c = space.decode(i);
    const Reason r = check_reason(base, c, facts);
    if (c.pp > 1 && c.schedule == strat::PipelineSchedule::kInterleaved && c.chunks == 1) {
      CHECK(r == Reason::kDuplicate);
      ++interleaved_one;
    }
    if (c.placement == strat::TpPlacement::kTsp && c.tp == 1) {
      CHECK(r != Reason::kOk);
      ++tsp_tp1;
    }
  }
  CHECK(interleaved_one > 0);
  CHECK(tsp_tp1 > 0);
  // And validate says why: tsp at tp 1 is the plain layout.
  json tsp = json::parse(test::read_text(test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json"));
  tsp["parallel"] = {{"dp", 8}, {"tp", 1}, {"tp_placement", "tsp"}};
  tsp["training"]["attention"] = "flash";
  tsp["training"]["recompute"] = "none";
  CHECK_THROWS_WITH_AS(strat::parse_scenario(tsp.dump(), "t.json"),
                       doctest::Contains("/parallel/tp_placement: tsp folds sequence and tensor "
                                         "parallelism on tp ranks: with tp 1 there is nothing"),
                       cost::InputError);
}

TEST_CASE("uneven stages are searched: 126 layers on 16 stages as 7 + 14 x 8 + 7") {
  json s = llama70b(2048, 2048);
  s["model"] = {{"name", "llama3-405b-shape"}, {"layers", 126},      {"hidden", 16384},
                {"heads", 128},                 {"kv_heads", 8},      {"ffn_hidden", 53248},
                {"vocab", 128256},              {"seq_len", 8192},    {"mlp", "swiglu"},
                {"norm", "rmsnorm"},            {"tied_embeddings", false}};
  s["training"]["attention"] = "flash";
  s.erase("parallel");  // the planner chooses: no "yours" row
  test::TempDir tmp;
  const std::string out = tmp.file("plan.json");
  const PlanRun r = plan_document(s, {"tp=8", "pp=16", "cp=1", "micro_batch=1"}, out);
  REQUIRE_MESSAGE(r.code == cli::kExitOk, r.err << r.out);
  CHECK(r.out.find("yours") == std::string::npos);
  CHECK(r.out.find("first 7 last 7") != std::string::npos);  // the winner's line
  const json plan = json::parse(test::read_text(out));
  CHECK(plan["scenario"]["parallel"]["first_stage_layers"] == 7);
  CHECK(plan["scenario"]["parallel"]["last_stage_layers"] == 7);
  // The screen and the simulation see the same stages: the plan simulates to its prediction.
  const strat::Scenario planned = strat::parse_scenario(plan["scenario"].dump(), "plan");
  CHECK(planned.parallel.stage_layers.front() == 7);
  CHECK(planned.parallel.stage_layers[1] == 8);
  CHECK(planned.parallel.stage_layers.back() == 7);
}

TEST_CASE("ties within the model's error are marked, the simplest named; --tie 0 turns it off") {
  const PlanRun r = plan_document(llama70b(32, 512));
  REQUIRE_MESSAGE(r.code == cli::kExitOk, r.err);
  CHECK_MESSAGE(r.out.find("are within 7.2 % of the winner, the model's error for multi-node "
                           "runs (docs/validation.md: family vtrain-multi-node, MAE 7.20 %)") !=
                    std::string::npos,
                r.out);
  CHECK(r.out.find("the simplest shown is row ") != std::string::npos);
}

TEST_CASE("an infeasible search says why in one line and names the nearest feasible GPU counts") {
  // 664 = 8 x 83: tp at most 8 (8 kv heads), 83 stages over 80 layers, dp 83 not dividing the
  // batch of 512, cp 83 not splitting 4096 tokens. 656 = 8 x 41 x 2 and 672 = 8 x 21 x 4 have
  // layouts (41 and 21 stages with fewer layers on the first and the last).
  const PlanRun r = plan_document(llama70b(128, 512), {}, "", 664);
  CHECK(r.code == cli::kExitFailure);
  CHECK_MESSAGE(r.err.find("no feasible plan: no layout of 664 GPUs passes the rules") !=
                    std::string::npos,
                r.err);
  CHECK_MESSAGE(r.err.find("nearest GPU counts with a layout that passes the rules: 656, 672") !=
                    std::string::npos,
                r.err);
}

TEST_CASE("below one node the nearest GPU counts are parts of a node") {
  // 3 GPUs: no tp divides the 8 kv heads into 3 with pp 1 and cp 1; 2 and 4 do.
  const PlanRun r = plan_document(llama70b(8, 512), {"pp=1", "cp=1"}, "", 3);
  CHECK(r.code == cli::kExitFailure);
  CHECK_MESSAGE(r.err.find("nearest GPU counts with a layout that passes the rules: 2, 4") !=
                    std::string::npos,
                r.err);
}

TEST_CASE("the infeasible line names the rules that rejected the most, with their counts") {
  // A micro-batch of 3 divides no batch of 512: the batch rule is among the reasons named.
  const PlanRun r = plan_document(llama70b(8, 512), {"micro_batch=3"});
  CHECK(r.code == cli::kExitFailure);
  CHECK_MESSAGE(
      r.err.find("global batch not a multiple of micro-batch x dp (") != std::string::npos, r.err);
}

TEST_CASE("--gpus and --search gpus= together are refused; a list of repeats is one value") {
  PlanRun r = plan_document(llama70b(8, 512), {"gpus=64", "pp=1"}, "", 64);
  CHECK(r.code == cli::kExitBadInput);
  CHECK_MESSAGE(r.err.find("--gpus: the GPU count is given twice") != std::string::npos, r.err);
  r = plan_document(llama70b(8, 512), {"zero_stage=1,1,1,1,1", "pp=2", "micro_batch=1"});
  CHECK_MESSAGE(r.code == cli::kExitOk, r.err);
}

TEST_CASE("a yours row with a split first/last cannot express keeps it, in the screen too") {
  json doc =
      json::parse(test::read_text(test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json"));
  doc["parallel"] = {{"dp", 2}, {"tp", 1}, {"pp", 4}, {"stage_layers", {9, 7, 8, 8}}};
  const strat::Scenario s = strat::parse_scenario_document(doc, "s.json");
  const Candidate c = candidate_of(s);
  CHECK(c.own_stage_layers);
  CHECK(describe(c).find("own stages") != std::string::npos);
  CHECK(apply_candidate(s, c).parallel.stage_layers == std::vector<int>{9, 7, 8, 8});
  // An edge split is first/last, the candidate the space holds; an even one is nothing.
  doc["parallel"]["stage_layers"] = {7, 9, 9, 7};
  const Candidate edges = candidate_of(strat::parse_scenario_document(doc, "s.json"));
  CHECK_FALSE(edges.own_stage_layers);
  CHECK(edges.first_stage_layers == 7);
  CHECK(edges.last_stage_layers == 7);
}

TEST_CASE("search.precision: the recipe is an axis; the device's refusals are rules; the plan "
          "file carries it") {
  json doc = json::parse(test::read_text(test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json"));
  doc["search"] = {{"precision", {"bf16", "fp8:delayed", "fp8:mxfp8"}}};
  const strat::Scenario base = strat::parse_scenario(doc.dump(), "p.json");
  SearchOptions so;
  so.flags = {"tp=2", "pp=2", "micro_batch=2", "recompute=selective", "zero_stage=1"};
  const SearchSpace space = make_search_space(base, &doc["search"], so, "p.json");
  REQUIRE(space.recipes.size() == 3);
  const SpaceFacts facts = space_facts(space);
  int delayed_ok = 0, mxfp8 = 0;
  for (std::uint64_t i = 0; i < space.size(); ++i) {
    const Candidate c = space.decode(i);
    const Reason r = check_reason(base, c, facts);
    if (c.recipe == cost::QuantRecipe::kMxfp8) {
      CHECK(r != Reason::kOk);  // H100 has no block-scaled tensor cores
      if (r == Reason::kPrecision) ++mxfp8;
    }
    if (c.recipe == cost::QuantRecipe::kDelayed && r == Reason::kOk) ++delayed_ok;
  }
  CHECK(mxfp8 > 0);
  CHECK(delayed_ok > 0);
  // The default space is the scenario's own precision only.
  const SearchSpace plain = make_search_space(strat::parse_scenario(test::read_text(
      test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json"), "p.json"), nullptr, so, "p.json");
  CHECK(plain.recipes == std::vector<cost::QuantRecipe>{cost::QuantRecipe::kNone});
  // Planned with the FP8 recipes, the winner's plan file says its precision.
  test::TempDir tmp;
  const std::string out = tmp.file("plan.json");
  const PlanRun r = plan_document(doc, {"tp=1,2", "pp=1,2", "micro_batch=1,2"}, out);
  REQUIRE_MESSAGE(r.code == cli::kExitOk, r.err);
  CHECK(r.out.find("precision") != std::string::npos);
  const json plan = json::parse(test::read_text(out));
  CHECK(plan["scenario"]["training"]["precision"] == "fp8");
  CHECK(plan["scenario"]["training"]["fp8"]["recipe"] == "delayed");
}

}  // namespace parasim::plan
