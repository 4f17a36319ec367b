// parasim compare: one table, a rows array with the simulate keys, SVG per schedule, and bad
// combinations refused as bad input with nothing written.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"
#include "report/compare/compare_pictures.hpp"

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
  CHECK(j.at("rows")[2].at("weight_versions")[0] == 8);      // PipeDream, stage 0: P versions
  CHECK(j.at("rows")[3].at("staleness")[0].at("max") == 1);  // PACI, a = 8 >= P - 1
}

TEST_CASE("compare: an impossible schedule for the scenario is bad input, nothing written") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kSourceDir / "scenarios" / "paci-gpt2-medium.json").string();
  o.schedules = "1f1b,interleaved-1f1b,warp-drive";
  o.chunks = 2;  // 24 layers over 8 stages x 2 chunks: each stage's 3 split 2 + 1
  o.json = tmp.file("compare.json");
  o.svg_dir = tmp.file("svg");
  std::ostringstream out, err;
  CHECK(run_compare(o, out, err) == kExitBadInput);
  CHECK(err.str().find("warp-drive") != std::string::npos);
  CHECK(err.str().find("/parallel/chunks") == std::string::npos);
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
  o.layouts =
      "tsp,cp";  // cp replicates the weights (2 layers: 3.3 GiB of model state), tsp does not
  o.json = tmp.file("out.json");
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  const auto j = parse_json(read_text(o.json), "compare JSON");
  const double gib = 1024.0 * 1024 * 1024;
  // The table shows the device's memory: the allocator's peak, CUDA context and NCCL buffers.
  const double tsp = j.at("rows")[0].at("device_memory_bytes")[0].get<double>();
  const double cp = j.at("rows")[1].at("device_memory_bytes")[0].get<double>();
  REQUIRE(tsp <= 8 * gib);
  REQUIRE(cp > 8 * gib);
  const std::string text = out.str();
  CHECK(text.find(fmt::format("{:.2f} GiB*", cp / gib)) != std::string::npos);
  CHECK(text.find(fmt::format("{:.2f} GiB*", tsp / gib)) == std::string::npos);
  CHECK(text.find("* does not fit: the peak, CUDA context and NCCL buffers included, exceeds the "
                  "device's 8.0 GiB of HBM (1 of 2 variants") != std::string::npos);
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
  CHECK(j.at("rows")[0].at("parallel") ==
        parse_json(R"({"dp": 2, "tp": 8, "cp": 1, "pp": 1, "chunks": 1,
                       "sequence_parallel": false})",
                   ""));
  CHECK(j.at("rows")[1].at("parallel") ==
        parse_json(R"({"dp": 1, "tp": 8, "cp": 2, "pp": 1, "chunks": 1,
                       "sequence_parallel": true})",
                   ""));
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
  CHECK(j4.at("rows")[0].at("parallel") ==
        parse_json(R"({"dp": 4, "tp": 4, "cp": 1, "pp": 1, "chunks": 1,
                       "sequence_parallel": false})",
                   ""));
  CHECK(out.str().find("tp8xsp2              16 x     1") != std::string::npos);
  CompareOptions bad = o;
  bad.layouts = "tp3xsp5";
  bad.json = tmp.file("bad.json");
  std::ostringstream out2, err2;
  CHECK(run_compare(bad, out2, err2) == kExitBadInput);
  // A well-formed layout whose group does not divide the GPUs does not apply; none applies: exit 2.
  CHECK(err2.str().find("with layout tp3xsp5: a group of 15 GPUs does not divide the 16 GPUs of "
                        "each pipeline stage (dp 2 x tp 8 x cp 1)") != std::string::npos);
  CHECK(!fs::exists(bad.json));
  // Products that overflow int and names with trailing characters are refused, not run.
  for (const char* name :
       {"tp65536xsp65536", "tp8xsp2junk", "tp0xsp16", "tp-8xsp-2", "tsp3", "tsp0", "tsp4x",
        "tsp4294967304", "tp4294967304xsp2", "tsp+4", "tsp 4", "tsp08", "tpxsp2", "tp8xsp"}) {
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

TEST_CASE("compare --svg: file names from labels are sanitised and the table still prints") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kScenarios / "dash-llama-953m.json").string();
  o.optimizers = "shampoo/coupled-newton/fp32/1024,adamw";
  o.svg_dir = tmp.file("d");
  const CompareRun r = compare(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  CHECK(r.out.find("shampoo/coupled-newton/fp32/1024") != std::string::npos);  // the table
  for (const char* file :
       {"shampoo_coupled-newton_fp32_1024-timeline.svg",
        "shampoo_coupled-newton_fp32_1024-memory.svg", "adamw-timeline.svg", "adamw-memory.svg"}) {
    CHECK_MESSAGE(fs::exists(tmp.path() / "d" / file), file);
  }
  CHECK(tmp.entries() == std::vector<std::string>{"d"});  // nothing outside DIR
  CHECK(r.out.find("shampoo/coupled-newton/fp32/1024: shampoo_coupled-newton_fp32_1024-"
                   "timeline.svg") != std::string::npos);
}

TEST_CASE("compare --json: each row says which variant, sequence, optimizer and layout it is") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kScenarios / "tsp-7b-mi300x.json").string();
  o.layouts = "tsp,tp";
  o.seq_lens = "16384,131072";
  o.json = tmp.file("out.json");
  o.svg_dir = tmp.file("svg");
  const CompareRun r = compare(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  const auto j = parse_json(read_text(o.json), "compare JSON");
  REQUIRE(j.at("rows").size() == 4);
  const char* labels[] = {"tsp@16K", "tp@16K", "tsp@128K", "tp@128K"};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& row = j.at("rows")[i];
    CAPTURE(i);
    CHECK(row.at("variant") == labels[i]);
    CHECK(row.at("axis") == "layout");
    CHECK(row.at("layout") == (i % 2 == 0 ? "tsp" : "tp"));
    CHECK(row.at("seq_len") == (i < 2 ? 16384 : 131072));
    CHECK(row.at("tp_placement") == (i % 2 == 0 ? "tsp" : "megatron"));
    CHECK(row.at("schedule") == "1f1b");
    CHECK(row.at("optimizer").at("name") == "adamw");
    CHECK(row.at("parallel").at("tp") == 8);
    CHECK(row.at("applicable") == true);
    // The picture of every row names its variant in the title.
    std::string stem = labels[i];
    stem[stem.find('@')] = '_';  // "tsp@16K" -> tsp_16K-timeline.svg
    const std::string svg = read_text(tmp.path() / "svg" / (stem + "-timeline.svg"));
    CHECK(svg.find(fmt::format("class=\"title mid\">tsp-7b-mi300x: {} (1f1b, dp 1 tp 8 cp 1 pp "
                               "1{}, seq {}",
                               labels[i], i % 2 == 0 ? ", tsp" : "", i < 2 ? 16384 : 131072)) !=
          std::string::npos);
  }
  // Optimizer rows carry the optimizer's settings.
  CompareOptions opt;
  opt.scenario = (kScenarios / "dash-llama-953m.json").string();
  opt.optimizers = "dash-gpu/newton-db/fp16/512,adamw";
  opt.json = tmp.file("opt.json");
  const CompareRun ro = compare(opt);
  REQUIRE_MESSAGE(ro.code == kExitOk, ro.err);
  const auto jo = parse_json(read_text(opt.json), "compare JSON");
  CHECK(jo.at("rows")[0].at("variant") == "dash-gpu/newton-db/fp16/512");
  CHECK(jo.at("rows")[0].at("optimizer") ==
        parse_json(R"({"name": "dash", "stacking": "gpu", "solver": "newton-db",
                       "precision": "fp16", "block_size": 512})",
                   ""));
  CHECK(jo.at("rows")[1].at("optimizer") == parse_json(R"({"name": "adamw"})", ""));
}

TEST_CASE(
    "compare --svg: BOOST's placements have their own titles, async timelines shade the "
    "warm-up") {
  TempDir tmp;
  CompareOptions o;
  o.scenario = (kScenarios / "boost-7b-tp4.json").string();
  o.placements = "vanilla,btp";
  o.svg_dir = tmp.file("svg");
  REQUIRE(compare(o).code == kExitOk);
  const std::string vanilla = read_text(tmp.path() / "svg" / "vanilla-timeline.svg");
  const std::string btp = read_text(tmp.path() / "svg" / "btp-timeline.svg");
  CHECK(vanilla.find("boost-7b-tp4: vanilla (1f1b, dp 1 tp 4 cp 1 pp 1, vanilla") !=
        std::string::npos);
  CHECK(btp.find("boost-7b-tp4: btp (1f1b, dp 1 tp 4 cp 1 pp 1, btp") != std::string::npos);
  CHECK(read_text(tmp.path() / "svg" / "btp-memory.svg").find("boost-7b-tp4: btp (") !=
        std::string::npos);
  CHECK(vanilla.find("class=\"shade\"") == std::string::npos);  // a flush schedule: no warm-up

  CompareOptions a;
  a.scenario = (kScenarios / "paci-gpt2-medium.json").string();
  a.schedules = "paci";
  a.svg_dir = tmp.file("async");
  REQUIRE(compare(a).code == kExitOk);
  const std::string paci = read_text(tmp.path() / "async" / "paci-timeline.svg");
  CHECK(paci.find("paci (paci, dp 1 tp 1 cp 1 pp 8, seq 1024; 5 global batches, 2 warm-up "
                  "shaded)") != std::string::npos);
  CHECK(paci.find("class=\"shade\"><title>warm-up: 2 batches, excluded") != std::string::npos);
  CHECK(paci.find(">steady state: 3 batches (the report&apos;s window)</text>") !=
        std::string::npos);
}

TEST_CASE("compare --svg: each picture shows what its comparison is about, on one time axis") {
  TempDir tmp;
  // --optimizers: the optimizer step's own kernels are drawn (the inverse roots, the update's
  // all-gather), not an empty lane.
  CompareOptions o;
  o.scenario = (kScenarios / "dash-llama-953m.json").string();
  o.optimizers = "adamw,shampoo/coupled-newton/fp32/1024";
  o.svg_dir = tmp.file("opt");
  REQUIRE(compare(o).code == kExitOk);
  const std::string adamw = read_text(tmp.path() / "opt" / "adamw-timeline.svg");
  const std::string shampoo =
      read_text(tmp.path() / "opt" / "shampoo_coupled-newton_fp32_1024-timeline.svg");
  CHECK(adamw.find("<title>adamw step ") != std::string::npos);
  CHECK(shampoo.find("<title>inverse roots") != std::string::npos);
  CHECK(shampoo.find(">optimizer</text>") != std::string::npos);  // in the legend
  CHECK(shampoo.find(">dp communication</text>") != std::string::npos);
  // One axis: both pictures span the longer run (Shampoo's), so AdamW's ends early.
  auto span_of = [](const std::string& svg) {
    const auto at = svg.find("span ");
    return svg.substr(at, svg.find(" s -->", at) - at);
  };
  CHECK(span_of(adamw) == span_of(shampoo));
  // --placements: every placement's collectives are drawn on the stage's comm lane.
  CompareOptions p;
  p.scenario = (kScenarios / "boost-7b-tp4.json").string();
  p.placements = "megatron,btp";
  p.svg_dir = tmp.file("place");
  REQUIRE(compare(p).code == kExitOk);
  for (const char* name : {"megatron-timeline.svg", "btp-timeline.svg"}) {
    const std::string svg = read_text(tmp.path() / "place" / name);
    CAPTURE(name);
    CHECK(svg.find(">stage 0 comm</text>") != std::string::npos);
    CHECK(svg.find(">tp communication</text>") != std::string::npos);
  }
}

TEST_CASE("compare: the optimizer step is the simulate figure, the sum of its parts") {
  TempDir tmp;
  SimulateOptions s;
  s.scenario = (kScenarios / "dash-llama-953m.json").string();
  s.json = tmp.file("sim.json");
  std::ostringstream sout, serr;
  REQUIRE(run_simulate(s, sout, serr) == kExitOk);
  const auto sim = parse_json(read_text(s.json), "simulate JSON");
  double sum = 0;
  for (const auto& [name, value] : sim.at("optimizer_breakdown_s").items())
    sum += value.get<double>();
  CHECK(sim.at("optimizer_breakdown_s").contains("update all-gather"));
  CHECK(sim.at("optimizer_step_s").get<double>() == doctest::Approx(sum).epsilon(1e-12));
  CompareOptions o;
  o.scenario = s.scenario;
  o.json = tmp.file("cmp.json");
  const CompareRun r = compare(o);
  REQUIRE(r.code == kExitOk);
  const auto j = parse_json(read_text(o.json), "compare JSON");
  CHECK(j.at("rows")[0].at("optimizer_step_s") == sim.at("optimizer_step_s"));
  const std::string step = fmt::format("{:.1f}", sim.at("optimizer_step_s").get<double>() * 1e3);
  CHECK(r.out.find("1f1b                  " + step + "   [factor update") != std::string::npos);
  CHECK(sout.str().find(fmt::format("optimizer step {:.3f} ms (stage 0)",
                                    sim.at("optimizer_step_s").get<double>() * 1e3)) !=
        std::string::npos);
}

namespace {

// `parasim ARGS` as a process: exit code and standard output.
std::pair<int, std::string> run_parasim(const std::string& args) {
  const fs::path exe = fs::path(PARASIM_BINARY_DIR) / "cli" / "parasim";
  REQUIRE_MESSAGE(fs::exists(exe), "build the parasim executable first: " << exe.string());
  FILE* pipe = popen((exe.string() + " " + args + " 2>/dev/null").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) text.append(buf, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

}  // namespace

TEST_CASE("compare --help describes every axis") {
  int code = 0;
  std::string help;
  std::tie(code, help) = run_parasim("compare --help");
  CHECK(code == 0);
  for (const char* text : {"--schedules", "--placements", "--layouts", "--seq-lens", "--optimizers",
                           "not applicable", "pp = 1", "--svg", "--json"}) {
    CHECK_MESSAGE(help.find(text) != std::string::npos, text);
  }
}

TEST_CASE("picture file names: characters outside [A-Za-z0-9._-] replaced, every name unique") {
  CHECK(picture_stems({"shampoo/coupled-newton/fp32/1024", "tsp@16K", "1f1b", "a b:c*d"}) ==
        std::vector<std::string>{"shampoo_coupled-newton_fp32_1024", "tsp_16K", "1f1b", "a_b_c_d"});
  CHECK(picture_stems({"a/b", "a_b", "a?b", "a_b-2"}) ==
        std::vector<std::string>{"a_b", "a_b-2", "a_b-3", "a_b-2-2"});
  CHECK(picture_stems({"..", ".", "../x"}) == std::vector<std::string>{"_..", "_.", ".._x"});
  CHECK(picture_stems({"\xc3\xa9t\xc3\xa9"}) == std::vector<std::string>{"__t__"});
}

TEST_CASE(
    "compare --precisions: FP8 faster than bf16 on H100, MXFP8 a row saying why, the FP8 table") {
  CompareOptions o;
  o.scenario = (kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json").string();
  o.precisions = "bf16,fp8:delayed,fp8:mxfp8,fp8:torchao-rowwise";
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  const std::string text = out.str();
  CHECK(text.find("fp8:mxfp8") != std::string::npos);
  CHECK(text.find("MXFP8 needs block-scaled tensor cores") != std::string::npos);
  CHECK(text.find("FP8 on stage 0") != std::string::npos);
  CHECK(text.find("fp8 copies GiB") != std::string::npos);
  // An unknown precision is bad input, named.
  o.precisions = "bf16,fp7";
  std::ostringstream out2, err2;
  CHECK(run_compare(o, out2, err2) == kExitBadInput);
  CHECK(err2.str().find("unknown precision \"fp7\"") != std::string::npos);
}
