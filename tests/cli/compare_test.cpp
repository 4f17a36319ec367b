// parasim compare: one table, a rows array with the simulate keys, SVG per schedule, and bad
// combinations refused as bad input with nothing written.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"

using namespace parasim::cli;
using namespace parasim::test;

TEST_CASE("compare: table, rows with the simulate keys, pictures per schedule") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kSourceDir / "scenarios" / "paci-gpt2-medium.json").string();
  o.schedules = "1f1b,zb-h1,pipedream,paci";
  o.json = tmp.file("compare.json");
  o.svg_dir = tmp.file("svg");
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  for (const char* name : {"1f1b", "zb-h1", "pipedream", "paci"}) {
    CHECK(out.str().find(name) != std::string::npos);
    CHECK(fs::exists(tmp.path() / "svg" / (std::string(name) + "-timeline.svg")));
    CHECK(fs::exists(tmp.path() / "svg" / (std::string(name) + "-memory.svg")));
  }
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 4);
  CHECK(j.at("rows")[0].at("schedule") == "1f1b");
  for (const auto& row : j.at("rows")) {
    for (const char* key : {"step_time_s", "tokens_per_s", "mfu", "bubble_fraction",
                            "peak_memory_bytes", "staleness", "weight_versions", "comm_bytes"}) {
      CHECK_MESSAGE(row.contains(key), key);
    }
    CHECK(row.at("staleness").size() == 8);
  }
  CHECK(j.at("rows")[2].at("weight_versions")[0] == 8);  // PipeDream, stage 0: P versions
  CHECK(j.at("rows")[3].at("staleness")[0].at("max") == 1);  // PACI, a = 8 >= P - 1
}

TEST_CASE("compare: an impossible schedule for the scenario is bad input, nothing written") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kSourceDir / "scenarios" / "paci-gpt2-medium.json").string();
  o.schedules = "1f1b,interleaved-1f1b,warp-drive";
  o.chunks = 2;  // 24 layers over 8 stages x 2 chunks does not split evenly
  o.json = tmp.file("compare.json");
  o.svg_dir = tmp.file("svg");
  std::ostringstream out, err;
  CHECK(run_compare(o, out, err) == kExitBadInput);
  CHECK(err.str().find("/parallel/chunks") != std::string::npos);
  CHECK(err.str().find("warp-drive") != std::string::npos);
  CHECK(tmp.entries().empty());
}

TEST_CASE("compare --placements: dense Megatron, vanilla and BTP low-rank side by side") {
  TempDir tmp;
  write_text(tmp.path() / "s.json", R"({
    "name": "placements", "model": {"preset": "llama2-7b", "layers": 4},
    "cluster": {"preset": "perlmutter-a100", "nodes": 1},
    "training": {"global_batch": 4, "micro_batch": 4},
    "parallel": {"tp": 4}})");
  CompareOptions o;
  o.scenario = (tmp.path() / "s.json").string();
  o.placements = "megatron,vanilla,btp";
  o.json = tmp.file("out.json");
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 3);
  CHECK(j.at("rows")[0].at("tp_placement") == "megatron");
  CHECK(j.at("rows")[2].at("tp_placement") == "btp");
  // BTP moves 7r = 7d/4 elements per token where Megatron moves 2d: fewer bytes.
  CHECK(j.at("rows")[2].at("comm_bytes").at("tp").get<double>() <
        j.at("rows")[0].at("comm_bytes").at("tp").get<double>());
  CHECK(j.at("rows")[1].at("comm_bytes").at("tp").get<double>() >
        j.at("rows")[0].at("comm_bytes").at("tp").get<double>());
}

TEST_CASE("simulate: an output that cannot be written leaves no other output behind") {
  TempDir tmp;
  fs::create_directory(tmp.path() / "result.json");  // a folder where the JSON should go
  SimulateOptions o;
  o.scenario = (kSourceDir / "scenarios" / "gpt2-medium-gpipe.json").string();
  o.json = tmp.file("result.json");
  o.trace = tmp.file("trace.json");
  std::ostringstream out, err;
  CHECK(run_simulate(o, out, err) == kExitBadInput);
  CHECK(err.str().find("it is a folder") != std::string::npos);
  CHECK(tmp.entries() == std::vector<std::string>{"result.json"});
  CHECK(out.str().empty());
}

TEST_CASE("compare --layouts with --seq-lens: TSP lowest in memory, a sweep plot") {
  TempDir tmp;
  write_text(tmp.path() / "s.json", R"({
    "name": "layouts", "model": {"preset": "llama2-7b", "layers": 2, "seq_len": 16384},
    "cluster": "mi300x-8x", "training": {"global_batch": 1, "attention": "flash"},
    "parallel": {"tp": 8, "tp_placement": "tsp"}})");
  CompareOptions o;
  o.scenario = (tmp.path() / "s.json").string();
  o.layouts = "tsp,tp,tp4xsp2,cp";
  o.seq_lens = "8192,16384";
  o.json = tmp.file("out.json");
  o.svg_dir = tmp.file("svg");
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 8);
  CHECK(fs::exists(tmp.path() / "svg" / "memory-vs-sequence.svg"));
  // Within each sequence length, TSP's peak is the lowest.
  for (std::size_t base : {std::size_t{0}, std::size_t{4}}) {
    const double tsp = j.at("rows")[base].at("peak_memory_bytes")[0].get<double>();
    for (std::size_t i = 1; i < 4; ++i) {
      CHECK(tsp < j.at("rows")[base + i].at("peak_memory_bytes")[0].get<double>());
    }
  }
  CompareOptions bad = o;
  bad.layouts = "tp3xsp3";
  bad.json = tmp.file("bad.json");
  bad.svg_dir.clear();
  std::ostringstream out2, err2;
  CHECK(run_compare(bad, out2, err2) == kExitBadInput);
  CHECK(err2.str().find("tp3xsp3") != std::string::npos);
}

TEST_CASE("compare: times out of the engine's range are bad input, nothing written") {
  TempDir tmp;
  const std::string path = tmp.file("slow.json");
  std::ofstream(path) << R"({"model": "gpt2-medium",
    "cluster": {"preset": "dgx-a100-80gb", "device": {"peak": {"bf16": "1 FLOP/s"}}},
    "training": {"global_batch": 8}, "parallel": {"dp": 8}})";
  CompareOptions o;
  o.scenario = path;
  o.schedules = "1f1b";
  o.json = tmp.file("compare.json");
  std::ostringstream out, err;
  CHECK(run_compare(o, out, err) == kExitBadInput);
  CHECK(err.str().find("outside the simulator's range") != std::string::npos);
  CHECK(!fs::exists(o.json));
}

TEST_CASE("compare: a variant whose peak exceeds the device's memory is marked and counted") {
  TempDir tmp;
  write_text(tmp.path() / "s.json", R"({
    "name": "fit", "model": {"preset": "llama2-7b", "layers": 2, "seq_len": 16384},
    "cluster": {"preset": "mi300x-8x", "device": {"hbm_capacity": "8 GiB"}},
    "training": {"global_batch": 1, "attention": "flash"},
    "parallel": {"tp": 8, "tp_placement": "tsp"}})");
  CompareOptions o;
  o.scenario = (tmp.path() / "s.json").string();
  o.layouts = "tsp,cp";  // cp replicates the weights (2 layers: 3.3 GiB of model state), tsp does not
  o.json = tmp.file("out.json");
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  const auto j = parse_json(read_text(o.json), "compare JSON");
  const double gib = 1024.0 * 1024 * 1024;
  const double tsp = j.at("rows")[0].at("peak_memory_bytes")[0].get<double>();
  const double cp = j.at("rows")[1].at("peak_memory_bytes")[0].get<double>();
  REQUIRE(tsp <= 8 * gib);
  REQUIRE(cp > 8 * gib);
  const std::string text = out.str();
  CHECK(text.find(fmt::format("{:.2f} GiB*", cp / gib)) != std::string::npos);
  CHECK(text.find(fmt::format("{:.2f} GiB*", tsp / gib)) == std::string::npos);
  CHECK(text.find("* does not fit: the peak exceeds the device's 8.0 GiB of HBM (1 of 2 variants") !=
        std::string::npos);
}

TEST_CASE("compare --layouts: a TP+SP group of another size keeps the GPUs, fewer replicas") {
  TempDir tmp;
  write_text(tmp.path() / "s.json", R"({
    "name": "matched", "model": {"preset": "llama2-7b", "layers": 2, "seq_len": 16384},
    "cluster": {"preset": "mi300x-8x", "nodes": 2},
    "training": {"global_batch": 4, "attention": "flash"},
    "parallel": {"dp": 2, "tp": 8, "tp_placement": "tsp"}})");
  CompareOptions o;
  o.scenario = (tmp.path() / "s.json").string();
  o.layouts = "tsp,tp8xsp2";  // TSP on 8 GPUs against TSP's "matched" 8-way TP x 2-way SP on 16
  o.json = tmp.file("out.json");
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 2);
  CHECK(j.at("rows")[0].at("parallel") == parse_json(R"({"dp": 2, "tp": 8, "cp": 1, "pp": 1})", ""));
  CHECK(j.at("rows")[1].at("parallel") == parse_json(R"({"dp": 1, "tp": 8, "cp": 2, "pp": 1})", ""));
  CHECK(j.at("rows")[0].at("total_gpus") == 16);
  CHECK(j.at("rows")[1].at("total_gpus") == 16);
  // TSP on D = 4 with twice the replicas.
  CompareOptions d4 = o;
  d4.layouts = "tsp4";
  d4.json = tmp.file("d4.json");
  std::ostringstream out4, err4;
  REQUIRE_MESSAGE(run_compare(d4, out4, err4) == kExitOk, err4.str());
  const auto j4 = parse_json(read_text(d4.json), "compare JSON");
  CHECK(j4.at("rows")[0].at("tp_placement") == "tsp");
  CHECK(j4.at("rows")[0].at("parallel") == parse_json(R"({"dp": 4, "tp": 4, "cp": 1, "pp": 1})", ""));
  CHECK(out.str().find("tp8xsp2              16 x     1") != std::string::npos);
  CompareOptions bad = o;
  bad.layouts = "tp3xsp5";
  bad.json = tmp.file("bad.json");
  std::ostringstream out2, err2;
  CHECK(run_compare(bad, out2, err2) == kExitBadInput);
  CHECK(err2.str().find("N (x M) dividing the 16 GPUs of each pipeline stage (dp 2 x tp 8 x cp 1)") !=
        std::string::npos);
  CHECK(!fs::exists(bad.json));
  // Products that overflow int and names with trailing characters are refused, not run.
  for (const char* name : {"tp65536xsp65536", "tp8xsp2junk", "tp0xsp16", "tp-8xsp-2", "tsp3",
                           "tsp0", "tsp4x", "tsp4294967304", "tp4294967304xsp2", "tsp+4",
                           "tsp 4", "tsp08", "tpxsp2", "tp8xsp"}) {
    CAPTURE(name);
    bad.layouts = name;
    std::ostringstream out3, err3;
    CHECK(run_compare(bad, out3, err3) == kExitBadInput);
    CHECK(err3.str().find(name) != std::string::npos);
  }
}

TEST_CASE("compare: a scenario's TSP head bucketing stays with the TSP layouts only") {
  TempDir tmp;
  write_text(tmp.path() / "s.json", R"({
    "name": "buckets", "model": {"preset": "llama2-7b", "layers": 2, "seq_len": 16384},
    "cluster": "mi300x-8x", "training": {"global_batch": 1, "attention": "flash"},
    "parallel": {"tp": 8, "tp_placement": "tsp", "tsp_kv_buckets": 2}})");
  CompareOptions o;
  o.scenario = (tmp.path() / "s.json").string();
  o.layouts = "tsp,tp,cp,tp4xsp2";
  o.json = tmp.file("out.json");
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  CHECK(parse_json(read_text(o.json), "compare JSON").at("rows").size() == 4);
}
