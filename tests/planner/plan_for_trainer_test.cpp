// `parasim plan --for TRAINER` (planner/trainer_filter.hpp, planner/plan_question.hpp): for every
// shipped scenario and trainer, the plan is one the trainer's export writes without
// approximation, with keys from the trainer's own lists; a scenario the trainer cannot build is
// refused up front with the reason; the memoised filter is the exporter's answer exactly.
#include <doctest/doctest.h>

#include <sstream>

#include "cli/commands.hpp"
#include "cli/plan_command.hpp"
#include "export_test_support.hpp"
#include "plan_run.hpp"
#include "planner/cost_models.hpp"
#include "planner/export/target_versions.hpp"
#include "planner/export/trainer_defaults.hpp"
#include "planner/plan_scenario.hpp"
#include "planner/rules.hpp"
#include "planner/trainer_filter.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::plan {
namespace {

using exporter::Target;
using nlohmann::json;

using test::PlanRun;

PlanRun run_plan(const std::string& scenario, const std::string& trainer, const std::string& out,
                 std::vector<std::string> search = {}) {
  cli::PlanCommandOptions o;
  o.scenario = scenario;
  o.trainer = trainer;
  o.out = out;
  o.search = std::move(search);
  // The export of the winner is what is checked here, not the ranking. The four largest shipped
  // scenarios search a few pipeline and tensor degrees only (their default spaces take 10 s to
  // 2 min on 2 cores, many times that under the sanitizers), and the 16,384-GPU one simulates a
  // few (1.7 s each).
  if (scenario.find("llama3-405b-gb200-nvl72") != std::string::npos) {
    o.search.insert(o.search.end(), {"pp=1,4", "tp=1,8"});  // DeepSpeed's winner has pp 1
  }
  if (scenario.find("llama3-405b-torchtitan-float8") != std::string::npos) {
    o.search.insert(o.search.end(), {"pp=1", "tp=8"});  // its own degrees
  }
  if (scenario.find("deepseek-v3-2048gpu") != std::string::npos) {
    o.search.insert(o.search.end(), {"pp=16", "tp=1,2"});
  }
  if (scenario.find("llama3-405b-16384gpu") != std::string::npos) {
    o.search.insert(o.search.end(), {"pp=16", "tp=8"});
    o.top = 2;
    o.max_simulate = 8;
  }
  return test::run_plan(o);
}

}  // namespace

TEST_CASE("plan --for T then export --to T: every shipped scenario, every trainer") {
  test::TempDir tmp;
  int planned = 0, refused = 0;
  for (const test::fs::path& scenario : test::json_files_in(test::kSourceDir / "scenarios")) {
    for (const Target t : kTrainers) {
      const std::string name = exporter::target_name(t);
      CAPTURE(scenario.filename().string());
      CAPTURE(name);
      const std::string plan_file = tmp.file(scenario.stem().string() + "-" + name + ".json");
      const PlanRun r = run_plan(scenario.string(), name, plan_file);
      if (r.code == cli::kExitBadInput) {  // the model or the optimizer: refused up front
        // (models with experts: the planner does not search them yet, whatever the trainer)
        CHECK_MESSAGE(
            (r.err.find("whatever the layout (plan --for " + name + ")") != std::string::npos ||
             r.err.find("does not search layouts of models with experts yet") != std::string::npos),
            r.err);
        CHECK_FALSE(test::fs::exists(plan_file));
        ++refused;
        continue;
      }
      if (r.code == cli::kExitFailure) {
        // Nothing the trainer runs fits: DeepSeek-V3 under torchtitan, whose sharding is FSDP2
        // (ZeRO-3), which parasim does not model with experts yet (ZeRO 0 does not fit 671B);
        // Llama 3 405B under DeepSpeed within the searched tp 8 x pp 16.
        CHECK_MESSAGE(r.err.find("no feasible plan") != std::string::npos, r.err);
        const std::string pair = scenario.stem().string() + " " + name;
        CHECK_MESSAGE((pair == "deepseek-v3-2048gpu torchtitan" ||
                       pair == "llama3-405b-16384gpu deepspeed"),
                      pair);
        CHECK_FALSE(test::fs::exists(plan_file));
        continue;
      }
      REQUIRE_MESSAGE(r.code == cli::kExitOk, r.err << r.out);
      CHECK(r.out.find("for " + exporter::resolve_version(t, "", false).label) !=
            std::string::npos);
      const auto in = exporter::load_export_input(plan_file);
      const test::TargetCase target{t, "", name};
      const test::Outcome exported = test::run_export(in, target, false, false);
      REQUIRE_MESSAGE(exported.result, exported.refusal);  // no --allow-approximate needed
      const auto keys = test::emitted_keys(target, exported.result->text);
      CHECK(!keys.empty());
      for (const std::string& k : test::unknown_keys(keys, test::key_list(test::list_file(target, false)))) {
        CHECK_MESSAGE(false, "unknown key " << k);
      }
      ++planned;
    }
  }
  CHECK(planned >= 15);
  CHECK(refused >= 15);  // BOOST's low-rank models, DASH, GELU models for torchtitan
}

TEST_CASE("the trainer filter answers what the trainer's exporter answers, candidate by candidate") {
  // The third space differs only in the stage split (DeepSpeed runs even stages alone): a memo
  // keyed without it answered for one split what the exporter said of the other.
  const std::vector<std::pair<const char*, std::vector<std::string>>> spaces = {
      {"llama2-7b-dgx-h100.json", {"micro_batch=1,2"}},
      {"gpt2-medium-gpipe.json", {"micro_batch=1,2"}},
      {"llama2-7b-dgx-h100.json", {"first_stage_layers=10,16", "pp=2", "micro_batch=1"}}};
  for (const auto& entry : spaces) {
    const char* const file = entry.first;
    const std::vector<std::string>& flags = entry.second;
    const json doc = json::parse(test::read_text(test::kSourceDir / "scenarios" / file));
    for (const Target t : kTrainers) {
      const strat::Scenario scenario = strat::parse_scenario_document(
          exporter::with_trainer_defaults(doc, t, nullptr), file);
      CAPTURE(file);
      CAPTURE(exporter::target_name(t));
      SearchOptions so;
      so.flags = flags;
      const SearchSpace space = make_search_space(scenario, nullptr, so, file);
      const SpaceFacts facts = space_facts(space);
      TrainerFilter filter(scenario, t);
      int checked = 0, accepted = 0;
      for (std::uint64_t i = 0; i < space.size(); ++i) {
        const Candidate c = space.decode(i);
        if (check_reason(scenario, c, facts) != Reason::kOk) continue;
        const bool direct = export_differences(apply_candidate(scenario, c), t).empty();
        INFO(describe(c));
        CHECK(filter.accepts(c) == direct);
        ++checked;
        accepted += direct ? 1 : 0;
      }
      CHECK(checked > 4);
      if (std::string(file) == "llama2-7b-dgx-h100.json") CHECK(accepted > 0);
    }
  }
}

TEST_CASE("--for applies the trainer's defaults where the scenario does not choose") {
  const json doc = json::parse(
      test::read_text(test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json"));
  std::vector<std::string> changes;
  const json megatron = exporter::with_trainer_defaults(doc, Target::kMegatron, &changes);
  CHECK(megatron["training"]["framework"] == "megatron-lm");
  CHECK(megatron["training"]["grad_precision"] == "fp32");  // Megatron reduces bf16 in fp32
  const json deepspeed = exporter::with_trainer_defaults(doc, Target::kDeepSpeed, nullptr);
  CHECK(deepspeed["training"]["framework"] == "deepspeed");
  CHECK_FALSE(deepspeed["training"].contains("grad_precision"));  // the model dtype, as parsed
  json chosen = doc;
  chosen["training"]["grad_precision"] = "bf16";
  chosen["training"]["framework"] = "megatron-lm-2021";
  const json kept = exporter::with_trainer_defaults(chosen, Target::kMegatron, nullptr);
  CHECK(kept["training"]["grad_precision"] == "bf16");
  CHECK(kept["training"]["framework"] == "megatron-lm-2021");
}

TEST_CASE("a search.trainer key plans for it; a bad one is exit 2 at its path") {
  test::TempDir tmp;
  json doc = json::parse(
      test::read_text(test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json"));
  doc["search"] = {{"trainer", "deepspeed"}, {"pp", {1, 2}}, {"micro_batch", {1, 2}}};
  const std::string path = tmp.file("s.json");
  test::write_text(path, doc.dump());
  PlanRun r = run_plan(path, "", "");
  CHECK_MESSAGE(r.code == cli::kExitOk, r.err);
  CHECK(r.out.find("for DeepSpeed 0.19.8") != std::string::npos);
  doc["search"]["trainer"] = "shampoo";
  test::write_text(path, doc.dump());
  r = run_plan(path, "", "");
  CHECK(r.code == cli::kExitBadInput);
  CHECK_MESSAGE(r.err.find(path + ": /search/trainer: expected megatron, deepspeed or torchtitan") !=
                    std::string::npos,
                r.err);
}

TEST_CASE("without --for the table says which trainers run each row") {
  const PlanRun r = run_plan((test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json").string(),
                             "", "", {"pp=1,2"});
  REQUIRE_MESSAGE(r.code == cli::kExitOk, r.err);
  CHECK(r.out.find("runs on") != std::string::npos);
  CHECK(r.out.find("M megatron, D deepspeed, T torchtitan") != std::string::npos);
}

}  // namespace parasim::plan

namespace parasim::plan {

TEST_CASE("a setting the trainer refuses with some layouts only is left to the filter") {
  // DeepSpeed refuses fp32 gradients of bf16 training with ZeRO 0 and accepts them with ZeRO 1-3:
  // not "whatever the layout", so the plan is found with ZeRO 1 or more.
  test::TempDir tmp;
  json doc =
      json::parse(test::read_text(test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json"));
  doc["training"]["grad_precision"] = "fp32";
  doc["parallel"]["zero_stage"] = 0;
  const std::string path = tmp.file("s.json");
  test::write_text(path, doc.dump());
  const PlanRun r = run_plan(path, "deepspeed", "", {"pp=1", "micro_batch=1,2"});
  REQUIRE_MESSAGE(r.code == cli::kExitOk, r.err);
  CHECK(r.out.find("winner: ") != std::string::npos);
  CHECK(r.out.find("ZeRO 0\n") == std::string::npos);
  CHECK(r.out.find("winner: dp 8 tp 1 pp 1 1f1b mb") != std::string::npos);
}

TEST_CASE("search.trainer is checked even when --for replaces it") {
  test::TempDir tmp;
  json doc =
      json::parse(test::read_text(test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json"));
  doc["search"] = {{"trainer", "shampoo"}};
  const std::string path = tmp.file("s.json");
  test::write_text(path, doc.dump());
  const PlanRun r = run_plan(path, "megatron", "");
  CHECK(r.code == cli::kExitBadInput);
  CHECK_MESSAGE(r.err.find("/search/trainer: expected megatron, deepspeed or torchtitan") !=
                    std::string::npos,
                r.err);
}

}  // namespace parasim::plan
