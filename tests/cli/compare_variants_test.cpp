// parasim compare's variants: a variant that does not apply is a row saying why, the default
// schedules run on every shipped scenario, and numbers in the option lists are range-checked.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <sstream>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"

using namespace parasim::cli;
using namespace parasim::test;

namespace {

const fs::path kScenarios = kSourceDir / "scenarios";

struct CompareRun {
  int code = 0;
  std::string out;
  std::string err;
};

CompareRun compare(const CompareOptions& o) {
  CompareRun r;
  std::ostringstream out, err;
  r.code = run_compare(o, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace

TEST_CASE("compare: a variant that does not apply is a row saying why, the rest is compared") {
  TempDir tmp;
  CompareOptions o;
  // dp 2 with ZeRO-2: the asynchronous schedules accumulate whole gradients (ZeRO 0 or 1 only).
  std::string text = read_text(kScenarios / "llama2-7b-dgx-h100.json");
  const std::string zero1 = "\"zero_stage\": 1";
  REQUIRE(text.find(zero1) != std::string::npos);
  text.replace(text.find(zero1), zero1.size(), "\"zero_stage\": 2");
  o.scenario = tmp.file("zero2.json");
  write_text(o.scenario, text);
  o.schedules = "1f1b,paci,zb-h1";
  o.json = tmp.file("out.json");
  const CompareRun r = compare(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  CHECK(r.out.find("paci              not applicable: paci accumulates whole gradients") !=
        std::string::npos);
  CHECK(r.out.find("(/parallel/zero_stage)") != std::string::npos);
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 3);
  CHECK(j.at("rows")[0].at("applicable") == true);
  CHECK(j.at("rows")[0].contains("step_time_s"));
  const auto& paci = j.at("rows")[1];
  CHECK(paci.at("variant") == "paci");
  CHECK(paci.at("applicable") == false);
  REQUIRE(paci.at("not_applicable").size() == 1);
  CHECK(paci.at("not_applicable")[0].at("path") == "/parallel/zero_stage");
  CHECK(paci.at("not_applicable")[0].at("reason").get<std::string>().find("zero_stage 0 or 1") !=
        std::string::npos);
  CHECK_FALSE(paci.contains("step_time_s"));
  CHECK(j.at("rows")[2].at("applicable") == true);

  // The first variant does not apply: the speedups are over the first that does.
  CompareOptions first = o;
  first.schedules = "pipedream,1f1b,zb-h1";
  first.json.clear();
  const CompareRun f = compare(first);
  REQUIRE_MESSAGE(f.code == kExitOk, f.err);
  CHECK(f.out.find("speedup: over 1f1b, the first variant that applies") != std::string::npos);

  // None applies: exit 2 with every reason, nothing written.
  CompareOptions none = o;
  none.schedules = "pipedream,paci";
  none.json = tmp.file("none.json");
  const CompareRun n = compare(none);
  CHECK(n.code == kExitBadInput);
  CHECK(n.err.find("/parallel/zero_stage: with schedule pipedream: ") != std::string::npos);
  CHECK(n.err.find("/parallel/zero_stage: with schedule paci: ") != std::string::npos);
  CHECK(n.out.empty());
  CHECK(!fs::exists(none.json));
}

TEST_CASE("compare with the default schedules runs on every shipped scenario") {
  for (const auto& path : json_files_in(kScenarios)) {
    CAPTURE(path.string());
    CompareOptions o;
    o.scenario = path.string();
    const CompareRun r = compare(o);
    CHECK_MESSAGE(r.code == kExitOk, r.err);
    CHECK(r.out.find("variant") != std::string::npos);
  }
  // pp = 1: no pipeline, so only the scenario's own schedule, and a line saying so.
  CompareOptions o;
  o.scenario = (kScenarios / "dash-llama-953m.json").string();
  const CompareRun r = compare(o);
  REQUIRE(r.code == kExitOk);
  CHECK(
      r.out.find("pp 1: no pipeline to schedule, so only the scenario's schedule (1f1b) is run") !=
      std::string::npos);
  CHECK(r.out.find("zb-h1") == std::string::npos);
}

TEST_CASE("compare: numbers in option lists are range-checked, exit 2 naming option and range") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kScenarios / "tsp-7b-mi300x.json").string();
  o.layouts = "tsp";
  o.json = tmp.file("out.json");
  for (const char* bad : {"abc", "0", "-4", "99999999999999", "16777217", "8k", "08192", " 8192"}) {
    CAPTURE(bad);
    o.seq_lens = std::string("16384,") + bad;
    const CompareRun r = compare(o);
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find(fmt::format("/model/seq_len: --seq-lens: \"{}\" is not a whole number from "
                                 "1 to 16,777,216 (tokens",
                                 bad)) != std::string::npos);
    CHECK(r.out.empty());
    CHECK(!fs::exists(o.json));
  }
  CompareOptions block = o;
  block.seq_lens.clear();
  block.layouts.clear();
  for (const char* bad : {"shampoo/evd/fp32/abc", "shampoo/evd/fp32/8", "shampoo/evd/fp32/-1024",
                          "shampoo/evd/fp32/99999999999999"}) {
    CAPTURE(bad);
    block.optimizers = bad;
    const CompareRun r = compare(block);
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("/optimizer/block_size: --optimizers: \"") != std::string::npos);
    CHECK(r.err.find("is not a whole number from 16 to 65,536") != std::string::npos);
  }
  CompareOptions chunks;
  chunks.scenario = (kScenarios / "llama2-7b-dgx-h100.json").string();
  chunks.schedules = "interleaved-1f1b";
  chunks.chunks = 0;
  const CompareRun c = compare(chunks);
  CHECK(c.code == kExitBadInput);
  CHECK(c.err.find("/parallel/chunks: --chunks: \"0\" is not a whole number from 1 to 64") !=
        std::string::npos);
  // --seq-lens goes with --layouts.
  CompareOptions alone;
  alone.scenario = chunks.scenario;
  alone.seq_lens = "4096";
  CHECK(compare(alone).code == kExitBadInput);
}

TEST_CASE("compare --ep and --dispatchers: a model with experts along its expert axes") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kScenarios / "qwen3-30b-a3b-8gpu.json").string();  // 128 experts on 8 GPUs
  o.ep = "2,8,16,3";
  o.json = tmp.file("ep.json");
  const CompareRun r = compare(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 4);
  CHECK(j.at("rows")[0].at("applicable") == true);
  CHECK(j.at("rows")[1].at("applicable") == true);
  // 16 does not fold over the stage's 8 GPUs; 3 divides neither the experts nor the GPUs.
  CHECK(j.at("rows")[2].at("applicable") == false);
  CHECK(j.at("rows")[3].at("applicable") == false);
  CHECK(r.out.find("ep (3) must divide the experts (128)") != std::string::npos);
  // More expert parallelism: fewer experts per GPU, less memory (every variant's own run).
  const auto& ep2 = j.at("rows")[0];
  const auto& ep8 = j.at("rows")[1];
  CHECK(ep8.at("peak_memory_bytes")[0].get<double>() <
        ep2.at("peak_memory_bytes")[0].get<double>());

  CompareOptions d;
  d.scenario = (kScenarios / "mixtral-8x7b-64gpu.json").string();
  d.dispatchers = "alltoall,allgather";
  const CompareRun both = compare(d);
  REQUIRE_MESSAGE(both.code == kExitOk, both.err);
  CHECK(both.out.find("allgather") != std::string::npos);

  d.dispatchers = "deepep";
  const CompareRun unknown = compare(d);
  CHECK(unknown.code == kExitBadInput);
  CHECK(unknown.err.find("--dispatchers: unknown dispatcher \"deepep\" (known: alltoall, "
                         "allgather, flex)") != std::string::npos);
  // DeepEP over etp x ep = 2 x 8 = 16 ranks on two nodes of 8: a row of its own.
  d.dispatchers = "alltoall,flex";
  const CompareRun flex = compare(d);
  REQUIRE_MESSAGE(flex.code == kExitOk, flex.err);
  CHECK(flex.out.find("flex") != std::string::npos);
  // A dense model: every degree above 1 is a row saying why, and with none applying, exit 2.
  CompareOptions dense;
  dense.scenario = (kScenarios / "llama2-7b-dgx-h100.json").string();
  dense.ep = "2";
  const CompareRun none = compare(dense);
  CHECK(none.code == kExitBadInput);
  CHECK(none.err.find("with ep 2: ep > 1 needs a model with experts (model.moe)") !=
        std::string::npos);
}

TEST_CASE("compare --shardings: ZeRO's stages against FSDP2, one row each, unknown names exit 2") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kScenarios / "llama3-8b-fsdp2-8gpu.json").string();
  o.shardings = "zero-1,zero-3,fsdp2";
  o.json = tmp.file("shardings.json");
  const CompareRun r = compare(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 3);
  for (const auto& row : j.at("rows")) CHECK(row.at("applicable") == true);
  // Sharding the weights too (ZeRO-3, FSDP2) holds less than sharding the optimizer alone.
  const double zero1 = j.at("rows")[0].at("peak_memory_bytes")[0].get<double>();
  CHECK(j.at("rows")[1].at("peak_memory_bytes")[0].get<double>() < zero1);
  CHECK(j.at("rows")[2].at("peak_memory_bytes")[0].get<double>() < zero1);
  // A pipelined scenario (tp 2, pp 2, dp 2): FSDP2 as torchtitan pipelines it, beside ZeRO-1.
  CompareOptions zb = o;
  zb.json.clear();
  zb.scenario = (kScenarios / "llama2-7b-dgx-h100.json").string();  // pp 2, 1f1b
  zb.shardings = "zero-1,fsdp2";
  const CompareRun piped = compare(zb);
  REQUIRE_MESSAGE(piped.code == kExitOk, piped.err);
  CHECK(piped.out.find("fsdp2") != std::string::npos);
  o.shardings = "fsdp";
  o.json.clear();
  const CompareRun unknown = compare(o);
  CHECK(unknown.code == kExitBadInput);
  CHECK(unknown.err.find("--shardings: unknown sharding \"fsdp\" (known: zero-0, zero-1, "
                         "zero-2, zero-3, fsdp2)") != std::string::npos);
}

TEST_CASE("compare --cp-variants: the context-parallel exchanges of one layout") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kScenarios / "llama3.1-8b-ulysses-cp4.json").string();  // tp 2, cp 4, a2a
  o.cp_variants = "ring,allgather,a2a,a2a+p2p";
  o.json = tmp.file("cp.json");
  const CompareRun r = compare(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 4);
  for (int i = 0; i < 3; ++i) CHECK(j.at("rows")[i].at("applicable") == true);
  // a2a+p2p needs its all-to-all group, which the scenario does not give: a row saying why.
  CHECK(j.at("rows")[3].at("applicable") == false);
  CHECK(r.out.find("\"a2a+p2p\" needs cp_a2a_size") != std::string::npos);
  // Each variant is its own run: the exchanges cost differently.
  CHECK(j.at("rows")[0].at("step_time_s") != j.at("rows")[2].at("step_time_s"));
  CHECK(j.at("rows")[0].at("step_time_s") != j.at("rows")[1].at("step_time_s"));

  o.cp_variants = "ulysses";
  const CompareRun unknown = compare(o);
  CHECK(unknown.code == kExitBadInput);
  CHECK(unknown.err.find("--cp-variants: unknown context-parallel variant \"ulysses\" (known: "
                         "ring, allgather, a2a, a2a+p2p)") != std::string::npos);
}

TEST_CASE("compare --tp-overlaps: the serial TP collectives against AsyncTP and userbuffers") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kScenarios / "llama2-70b-64gpu.json").string();  // tp 8 + SP, megatron-lm
  o.tp_overlaps = "none,async-tp,userbuffers";
  o.json = tmp.file("tpo.json");
  const CompareRun r = compare(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(j.at("rows")[i].at("applicable") == true);
  // Each overlap hides part of the serial collectives: faster than none on 70B-size GEMMs.
  CHECK(j.at("rows")[1].at("step_time_s").get<double>() <
        j.at("rows")[0].at("step_time_s").get<double>());
  CHECK(j.at("rows")[2].at("step_time_s").get<double>() <
        j.at("rows")[0].at("step_time_s").get<double>());

  o.tp_overlaps = "overlap";
  const CompareRun unknown = compare(o);
  CHECK(unknown.code == kExitBadInput);
  CHECK(unknown.err.find("--tp-overlaps: unknown overlap \"overlap\" (known: none, async-tp, "
                         "userbuffers)") != std::string::npos);
}
