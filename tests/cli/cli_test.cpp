// Tests of the parasim command line: the commands as functions (parasim::cli::run_*, with string
// streams). process_test.cpp runs the built executable.
#include "cli/commands.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../support/test_support.hpp"
#include "command_run.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace parasim::test;

// Small and fast, and it has all three kinds of parallelism (dp 2, tp 2, pp 2).
const fs::path kScenario = kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json";





std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// Sends std::cout into a string for the lifetime of the object (for output that a command should
// have written to its `out` stream but might write to std::cout).
class CoutCapture {
 public:
  CoutCapture() : old_(std::cout.rdbuf(buffer_.rdbuf())) {}
  CoutCapture(const CoutCapture&) = delete;
  CoutCapture& operator=(const CoutCapture&) = delete;
  ~CoutCapture() { std::cout.rdbuf(old_); }
  std::string text() const { return buffer_.str(); }

 private:
  std::ostringstream buffer_;
  std::streambuf* old_;
};

Run simulate(const SimulateOptions& options) {
  return run_command([&](std::ostream& o, std::ostream& e) { return run_simulate(options, o, e); });
}

Run validate(const std::string& path) {
  return run_command([&](std::ostream& o, std::ostream& e) { return run_validate(path, o, e); });
}


std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}


// Every expected problem appears as "FILE: PATH: ...substring...", one line each.
void check_problems_reported(const std::string& err, const std::string& file,
                             const std::vector<std::pair<std::string, std::string>>& problems) {
  for (const auto& problem : problems) {
    // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
    const std::string& path = problem.first;
    const std::string& substring = problem.second;
    const std::string prefix = file + ": " + path + ": ";
    bool found = false;
    std::istringstream lines(err);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind(prefix, 0) == 0 && line.find(substring) != std::string::npos) found = true;
    }
    CHECK_MESSAGE(found, "no line \"" << prefix << "..." << substring << "...\" in:\n" << err);
  }
  CHECK_MESSAGE(count_lines(err) == problems.size(),
                "expected " << problems.size() << " problem lines, got:\n" << err);
}

}  // namespace

TEST_CASE("every bad fixture: exit 2 from validate and simulate, file and JSON path named, "
          "no output files") {
  const fs::path dir = kSourceDir / "tests" / "data" / "bad";
  const auto expected = expected_problems(dir);
  const auto files = json_files_in(dir);
  REQUIRE(files.size() >= 10);
  std::set<std::string> seen;
  for (const auto& file : files) {
    const std::string name = file.filename().string();
    const std::string path = file.string();
    CAPTURE(path);
    seen.insert(name);
    const auto it = expected.find(name);
    REQUIRE_MESSAGE(it != expected.end(), name << " has no line in EXPECTED.txt");

    const Run v = validate(path);
    CHECK(v.code == kExitBadInput);
    CHECK(v.out.empty());
    check_problems_reported(v.err, path, it->second);

    TempDir tmp;
    SimulateOptions o;
    o.scenario = path;
    o.json = tmp.file("result.json");
    o.trace = tmp.file("trace.json");
    const Run s = simulate(o);
    CHECK(s.code == kExitBadInput);
    CHECK(s.out.empty());
    check_problems_reported(s.err, path, it->second);
    CHECK_MESSAGE(tmp.entries().empty(),
                  "a failed simulate left files behind: " << joined(tmp.entries()));
  }
  for (const auto& entry : expected) {
    const std::string& name = entry.first;  // not a structured binding: clang 14 (see above)
    CHECK_MESSAGE(seen.count(name) == 1, "EXPECTED.txt names " << name << ", which is missing");
  }
}

TEST_CASE("simulate --json FILE writes the result JSON with the documented keys") {
  TempDir tmp;
  SimulateOptions o;
  o.scenario = kScenario.string();
  o.json = tmp.file("result.json");
  const Run r = simulate(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  CHECK(r.err.empty());
  // The text report goes to `out` when the JSON goes to a file.
  CHECK(r.out.find("parasim simulate: llama2-7b-dgx-h100") != std::string::npos);
  CHECK(r.out.find("\nStep\n") != std::string::npos);
  CHECK(r.out.find("Bubble fraction per stage") != std::string::npos);
  CHECK(r.out.find("Communication per step") != std::string::npos);
  CHECK(r.out.find("Collectives (mean per instance") != std::string::npos);
  CHECK(r.out.find("Peak memory per device") != std::string::npos);
  CHECK(r.out.find("Critical path by category") != std::string::npos);
  CHECK_MESSAGE(tmp.entries() == std::vector<std::string>{"result.json"},
                "expected only result.json, found: " << joined(tmp.entries()));

  const std::string text = read_text(tmp.file("result.json"));
  CHECK(text.back() == '\n');
  const json j = parse_json(text, "the result file");
  REQUIRE(j.is_object());
  CHECK(j.at("parasim_result") == 1);
  CHECK(j.at("scenario") == "llama2-7b-dgx-h100");
  CHECK(j.at("mode") == "symmetric");
  for (const char* key : {"step_time_s", "tokens_per_s", "tokens_per_step", "mfu", "hfu",
                          "model_tflops_per_gpu", "model_flops_per_step", "pipeline_time_s",
                          "optimizer_step_s", "hbm_capacity_bytes"}) {
    CAPTURE(key);
    REQUIRE(j.contains(key));
    CHECK(j.at(key).is_number());
    CHECK(j.at(key).get<double>() > 0);
  }
  const double step = j.at("step_time_s").get<double>();
  CHECK(j.at("tokens_per_s").get<double>() ==
        doctest::Approx(j.at("tokens_per_step").get<double>() / step).epsilon(1e-12).scale(0));
  CHECK(j.at("tokens_per_step").get<double>() == 64.0 * 4096);
  CHECK(j.at("mfu").get<double>() < 1.0);
  CHECK(j.at("hfu").get<double>() >= j.at("mfu").get<double>());
  CHECK(j.at("pipeline_time_s").get<double>() <= step);
  CHECK(j.at("micro_batches") == 16);
  CHECK(j.at("total_gpus") == 8);
  CHECK(j.at("optimizer_host_ops") == 0);  // AdamW: no eager host loop is modelled
  CHECK(j.at("optimizer_host_syncs") == 0);

  const int devices = j.at("simulated_devices").get<int>();
  CHECK(devices == 2);  // symmetric: one device per stage
  REQUIRE(j.at("bubble_fraction").is_array());
  CHECK(j.at("bubble_fraction").size() == 2);  // one per stage (pp 2)
  for (const auto& b : j.at("bubble_fraction")) {
    CHECK(b.get<double>() >= 0);
    CHECK(b.get<double>() < 1);
  }
  REQUIRE(j.at("peak_memory_bytes").is_array());
  REQUIRE(j.at("peak_memory_bytes").size() == static_cast<std::size_t>(devices));
  REQUIRE(j.at("memory_breakdown_bytes").is_array());
  REQUIRE(j.at("memory_breakdown_bytes").size() == static_cast<std::size_t>(devices));
  for (std::size_t d = 0; d < static_cast<std::size_t>(devices); ++d) {
    CAPTURE(d);
    const double peak = j.at("peak_memory_bytes")[d].get<double>();
    CHECK(peak > 0);
    CHECK(peak < j.at("hbm_capacity_bytes").get<double>());
    const json& b = j.at("memory_breakdown_bytes")[d];
    REQUIRE(b.is_object());
    CHECK(b.at("device").is_string());
    CHECK(b.at("stage") == static_cast<int>(d));
    double sum = 0;
    for (const char* category : {"weights", "gradients", "optimizer state", "activations"}) {
      CAPTURE(category);
      REQUIRE(b.contains(category));
      CHECK(b.at(category).get<double>() > 0);
    }
    for (const auto& [key, value] : b.items()) {
      if (key != "device" && key != "stage") sum += value.get<double>();
    }
    CHECK(sum == doctest::Approx(peak).epsilon(1e-12).scale(0));  // the breakdown is at the peak
  }
  for (const char* key : {"comm_bytes", "exposed_comm_s"}) {
    CAPTURE(key);
    const json& c = j.at(key);
    REQUIRE(c.is_object());
    CHECK(c.size() == 5);                  // tp, pp, dp, cp, ep
    CHECK(c.at("cp").get<double>() == 0);  // no context parallelism here
    CHECK(c.at("ep").get<double>() == 0);  // no experts
    for (const char* kind : {"tp", "pp", "dp"}) {
      CAPTURE(kind);
      REQUIRE(c.contains(kind));
      CHECK(c.at(kind).get<double>() > 0);  // this scenario has all three kinds
    }
  }
  CHECK(j.at("link_bytes").at("intra_node").get<double>() > 0);
  CHECK(j.at("link_bytes").at("inter_node").get<double>() == 0);  // one node
  CHECK(j.at("critical_path_s").is_object());
  CHECK(j.at("critical_path_s").contains("forward"));
  CHECK(j.at("critical_path_s").contains("backward"));
  REQUIRE(j.at("collectives").is_array());
  std::set<std::string> rows;
  for (const auto& c : j.at("collectives")) {
    rows.insert(c.at("kind").get<std::string>() + " " + c.at("op").get<std::string>());
    CHECK(c.at("group_size") == 2);
    for (const char* key : {"count_per_gpu", "mean_message_bytes", "mean_time_s",
                            "algbw_bytes_per_s", "busbw_bytes_per_s"}) {
      CHECK(c.at(key).get<double>() > 0);
    }
  }
  // No sequence parallelism, ZeRO-1: all-reduce for tp, reduce-scatter and all-gather for dp.
  CHECK(rows == std::set<std::string>{"tp all-reduce", "pp send-recv", "dp reduce-scatter",
                                      "dp all-gather"});
  CHECK(j.at("ops").get<std::size_t>() > 0);
  CHECK(j.at("events").get<std::size_t>() > 0);
}

TEST_CASE("simulate --json - puts the JSON on the out stream and the text report on err") {
  SimulateOptions o;
  o.scenario = kScenario.string();
  o.json = "-";
  Run r;
  std::string leaked;
  {
    CoutCapture cout_capture;  // keeps the test's own output clean whatever the command does
    r = simulate(o);
    leaked = cout_capture.text();
  }
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  CHECK_MESSAGE(leaked.empty(),
                "run_simulate wrote to std::cout instead of its out stream:\n"
                    << leaked.substr(0, 200));
  CHECK(r.err.find("parasim simulate: llama2-7b-dgx-h100") != std::string::npos);
  CHECK(r.err.find("Critical path by category") != std::string::npos);
  CHECK(r.err.find('{') == std::string::npos);
  REQUIRE_MESSAGE(!r.out.empty(), "no JSON on the out stream");
  const json j = parse_json(r.out, "the out stream");
  CHECK(j.at("scenario") == "llama2-7b-dgx-h100");
  CHECK(j.at("step_time_s").get<double>() > 0);
}

TEST_CASE("simulating twice gives byte-identical result JSON and trace; the trace is valid") {
  TempDir a, b;
  for (const TempDir* dir : {&a, &b}) {
    SimulateOptions o;
    o.scenario = kScenario.string();
    o.json = dir->file("result.json");
    o.trace = dir->file("trace.json");
    const Run r = simulate(o);
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    CHECK(r.out.find("trace: " + o.trace + ", ") != std::string::npos);
    CHECK(r.out.find(" (open in https://ui.perfetto.dev)") != std::string::npos);
    CHECK(dir->entries() == std::vector<std::string>{"result.json", "trace.json"});
  }
  const std::string result_a = read_text(a.file("result.json"));
  const std::string trace_a = read_text(a.file("trace.json"));
  CHECK_MESSAGE(result_a == read_text(b.file("result.json")), "result JSON differs between runs");
  CHECK_MESSAGE(trace_a == read_text(b.file("trace.json")), "trace differs between runs");

  const json result = parse_json(result_a, "the result file");
  const json trace = parse_json(trace_a, "the trace");
  REQUIRE(trace.is_object());
  REQUIRE(trace.contains("traceEvents"));
  REQUIRE(trace.at("traceEvents").is_array());
  std::map<std::string, std::size_t> by_phase;
  std::set<std::string> lanes;
  std::size_t process_names = 0;
  for (const auto& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph").get<std::string>();
    ++by_phase[ph];
    CHECK(e.at("pid").is_number_integer());
    if (ph == "X") {
      CHECK(e.at("ts").get<double>() >= 0);
      CHECK(e.at("dur").get<double>() >= 0);
      CHECK(e.at("ts").get<double>() + e.at("dur").get<double>() <=
            result.at("step_time_s").get<double>() * 1e6 * (1 + 1e-12));
      CHECK(e.at("name").is_string());
      CHECK(e.at("cat").is_string());
    } else if (ph == "M") {
      if (e.at("name") == "process_name") ++process_names;
      if (e.at("name") == "thread_name") lanes.insert(e.at("args").at("name").get<std::string>());
    } else if (ph == "C") {
      CHECK(e.at("name") == "memory");
      CHECK(e.at("args").at("GiB").get<double>() >= 0);
    } else if (ph == "s" || ph == "f") {
      CHECK(e.at("id").is_number_integer());
      if (ph == "f") CHECK(e.at("bp") == "e");
    }
  }
  CHECK(by_phase["X"] == result.at("ops").get<std::size_t>());  // one slice per op
  CHECK(by_phase["M"] > 0);
  CHECK(by_phase["C"] > 0);
  // pp 2: pipeline transfers are drawn as flow arrows, one start and one end each.
  CHECK(by_phase["s"] > 0);
  CHECK(by_phase["s"] == by_phase["f"]);
  CHECK(process_names == result.at("simulated_devices").get<std::size_t>());
  for (const char* lane : {"compute", "tp-comm", "pp-recv-fwd", "pp-recv-bwd", "pp-send-fwd",
                           "pp-send-bwd", "dp-comm"}) {
    CHECK_MESSAGE(lanes.count(lane) == 1, "no lane " << lane);
  }
  // The JSON alone does not record the memory timeline, so it is the same with or without a trace.
  TempDir c;
  SimulateOptions o;
  o.scenario = kScenario.string();
  o.json = c.file("result.json");
  REQUIRE(simulate(o).code == kExitOk);
  CHECK(read_text(c.file("result.json")) == result_a);
}

TEST_CASE("simulate --profile: an empty profile changes nothing, a lower GEMM ceiling is slower") {
  TempDir tmp;
  auto step_time = [&](const std::string& profile) {
    SimulateOptions o;
    o.scenario = kScenario.string();
    o.profile = profile;
    o.json = tmp.file("result.json");
    const Run r = simulate(o);
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    if (!profile.empty()) {
      CHECK(r.out.find("cost model: profile " + profile) != std::string::npos);
    }
    return parse_json(read_text(tmp.file("result.json")), "the result file")
        .at("step_time_s")
        .get<double>();
  };
  const double base = step_time("");

  const std::string empty = tmp.file("empty-profile.json");
  write_text(empty, R"({"parasim_profile": 1, "source": "defaults only"})");
  CHECK(step_time(empty) == base);  // every field optional; the defaults are the model's

  // The default ceiling is 0.80; half of it makes every compute-bound GEMM take twice as long.
  const std::string slow = tmp.file("slow-gemm.json");
  write_text(slow, R"({"parasim_profile": 1, "gemm": {"ceiling": 0.4}})");
  const double slow_step = step_time(slow);
  CHECK(slow_step > 1.3 * base);
  CHECK(slow_step < 2.0 * base);  // not everything is a GEMM

  // Faster links can only help; faster HBM and higher peaks too.
  const std::string fast = tmp.file("fast.json");
  write_text(fast, R"({"parasim_profile": 1,
      "device": {"peak": {"bf16": "1979 TFLOP/s"}, "hbm_bandwidth": "6.7 TB/s",
                 "kernel_launch_overhead": "1 us"},
      "intra_node": {"bandwidth": "900 GB/s", "latency": "1 us"},
      "inter_node": {"bandwidth": "100 GB/s", "latency": "3 us"},
      "memory_efficiency": 0.9})");
  CHECK(step_time(fast) < base);
}

TEST_CASE("simulate --profile with a bad profile: exit 2 naming the profile and the JSON paths") {
  TempDir tmp;
  const std::string bad = tmp.file("bad-profile.json");
  write_text(bad, R"({"parasim_profile": 3,
      "gemm": {"ceiling": 2.0},
      "device": {"hbm_bandwith": "3 TB/s"},
      "inter_node": {"bandwidth": "45 GB"}})");
  TempDir out_dir;
  SimulateOptions o;
  o.scenario = kScenario.string();
  o.profile = bad;
  o.json = out_dir.file("result.json");
  o.trace = out_dir.file("trace.json");
  const Run r = simulate(o);
  CHECK(r.code == kExitBadInput);
  CHECK(r.out.empty());
  for (const char* path : {"/parasim_profile", "/gemm/ceiling", "/device/hbm_bandwith",
                           "/inter_node/bandwidth"}) {
    CHECK_MESSAGE(r.err.find(bad + ": " + std::string(path) + ": ") != std::string::npos,
                  "no problem at " << path << " in:\n"
                                   << r.err);
  }
  CHECK(count_lines(r.err) == 4);
  CHECK_MESSAGE(out_dir.entries().empty(), "left behind: " << joined(out_dir.entries()));

  const std::string invalid = tmp.file("invalid-profile.json");
  write_text(invalid, R"({"parasim_profile": 1,)");
  o.profile = invalid;
  const Run r2 = simulate(o);
  CHECK(r2.code == kExitBadInput);
  CHECK(r2.err.find(invalid + ": /: invalid JSON") != std::string::npos);

  o.profile = tmp.file("does-not-exist.json");
  const Run r3 = simulate(o);
  CHECK(r3.code == kExitBadInput);
  CHECK(r3.err == o.profile + ": /: cannot read: No such file or directory\n");
  CHECK_MESSAGE(out_dir.entries().empty(), "left behind: " << joined(out_dir.entries()));
}

TEST_CASE("simulate --profile with an incomplete calibration: one warning saying what it holds") {
  TempDir tmp;
  const std::string partial = tmp.file("partial.json");
  write_text(partial, R"({"parasim_profile": 2,
      "provenance": {"backend": "cuda", "device": "NVIDIA H100 80GB HBM3"}, "complete": false,
      "measurements": {"norms": [{"rows": 4096, "hidden": 4096, "fused_statistic": false,
                                  "bytes": 134234112, "median_s": 0.001, "p20_s": 0.001,
                                  "p80_s": 0.001, "samples": 5}]}})");
  SimulateOptions o;
  o.scenario = kScenario.string();
  o.profile = partial;
  o.json = tmp.file("result.json");
  const Run r = simulate(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  const std::string expected =
      "warning: " + partial +
      ": \"complete\": false, the calibration that wrote it did not finish: it holds 0 GEMM, 0 "
      "collective, 0 solver and 1 RMSNorm points, no launch overhead and 0 overlap points; what "
      "it lacks comes from the analytical model\n";
  CHECK_MESSAGE(r.err.find(expected) != std::string::npos, r.err);

  // The same profile, complete: no such warning.
  std::string text = read_text(partial);
  text.replace(text.find("\"complete\": false"), 17, "\"complete\": true");
  write_text(partial, text);
  const Run complete = simulate(o);
  REQUIRE_MESSAGE(complete.code == kExitOk, complete.err);
  CHECK(complete.err.find("did not finish") == std::string::npos);
}

TEST_CASE("simulate of a missing scenario file is bad input and writes nothing") {
  TempDir tmp;
  SimulateOptions o;
  o.scenario = tmp.file("no-such-scenario.json");
  o.json = tmp.file("result.json");
  o.trace = tmp.file("trace.json");
  const Run r = simulate(o);
  CHECK(r.code == kExitBadInput);
  CHECK(r.err == o.scenario + ": /: cannot read: No such file or directory\n");
  CHECK(tmp.entries().empty());
  // validate says the same, and the same for a folder.
  CHECK(validate(o.scenario).err == r.err);
  o.scenario = tmp.path().string();
  const Run folder = simulate(o);
  CHECK(folder.code == kExitBadInput);
  CHECK(folder.err == o.scenario + ": /: cannot read: it is a folder (expected a JSON file)\n");
  CHECK(validate(o.scenario).err == folder.err);
}

TEST_CASE("simulate --json into a missing folder is refused (exit 2) naming it, nothing written") {
  TempDir tmp;
  SimulateOptions o;
  o.scenario = kScenario.string();
  o.json = tmp.file("missing-folder/result.json");
  o.trace = tmp.file("trace.json");
  const Run r = simulate(o);
  CHECK(r.code == kExitBadInput);
  CHECK(r.err.find("cannot write " + o.json + ": the folder " + tmp.file("missing-folder") +
                   " does not exist") != std::string::npos);
  CHECK_MESSAGE(tmp.entries().empty(), "left behind: " << joined(tmp.entries()));
}

TEST_CASE("every shipped scenario: the result JSON is consistent with itself") {
  for (const auto& file : json_files_in(kSourceDir / "scenarios")) {
    CAPTURE(file.string());
    TempDir tmp;
    SimulateOptions o;
    o.scenario = file.string();
    o.json = tmp.file("result.json");
    const Run r = simulate(o);
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    const json j = parse_json(read_text(o.json), "the result file");
    const double step = j.at("step_time_s").get<double>();
    CHECK(step > 0);
    CHECK(j.at("mfu").get<double>() > 0);
    CHECK(j.at("mfu").get<double>() < 1);
    // Executed FLOPs include recompute, so hfu >= mfu; the slack allows for GEMM dimensions
    // rounded to whole rows (a vocabulary not divisible by tp).
    CHECK(j.at("hfu").get<double>() >= j.at("mfu").get<double>() * (1 - 1e-5));
    CHECK(j.at("hfu").get<double>() < 1);
    CHECK(j.at("pipeline_time_s").get<double>() <= step);
    const auto devices = j.at("simulated_devices").get<std::size_t>();
    CHECK(j.at("peak_memory_bytes").size() == devices);
    CHECK(j.at("memory_breakdown_bytes").size() == devices);
    std::size_t stages = 0;
    for (const auto& b : j.at("memory_breakdown_bytes")) {
      stages = std::max(stages, b.at("stage").get<std::size_t>() + 1);
    }
    CHECK(j.at("bubble_fraction").size() == stages);
    for (const auto& b : j.at("bubble_fraction")) {
      CHECK(b.get<double>() >= 0);
      CHECK(b.get<double>() < 1);
    }
    // Every byte sent crosses exactly one link class.
    double comm = 0;
    for (const auto& [kind, bytes] : j.at("comm_bytes").items()) comm += bytes.get<double>();
    const double links = j.at("link_bytes").at("intra_node").get<double>() +
                         j.at("link_bytes").at("inter_node").get<double>();
    // Byte counts, so scale 1 is already relative; no .scale(0): a one-GPU scenario sends 0.
    CHECK(links == doctest::Approx(comm).epsilon(1e-9));
    // The critical path covers the simulated run once: its categories add up to its length (the
    // step for flush schedules; several steps for asynchronous ones).
    const double run = j.at("simulated_time_s").get<double>();
    if (!j.at("asynchronous").get<bool>())
      CHECK(run == doctest::Approx(step).epsilon(1e-12).scale(0));
    double path = 0;
    for (const auto& [category, seconds] : j.at("critical_path_s").items()) {
      CHECK(seconds.get<double>() >= 0);
      path += seconds.get<double>();
    }
    CHECK_MESSAGE(path == doctest::Approx(run).epsilon(1e-9).scale(0),
                  "critical_path_s adds up to " << path << " s, the run is " << run << " s");
    for (const auto& c : j.at("collectives")) {
      CHECK(c.at("count_per_gpu").get<double>() > 0);
      CHECK(c.at("mean_message_bytes").get<double>() > 0);
      // nccl-tests' bus factor is between 1/2 ((n-1)/n, n >= 2) and 2 (2(n-1)/n).
      const double algbw = c.at("algbw_bytes_per_s").get<double>();
      const double busbw = c.at("busbw_bytes_per_s").get<double>();
      CHECK(algbw > 0);
      CHECK(busbw >= 0.5 * algbw);
      CHECK(busbw < 2 * algbw);
    }
  }
}

TEST_CASE("simulate --full gives the symmetric result for every GPU") {
  for (const char* name : {"llama2-7b-dgx-h100", "custom-cluster"}) {
    CAPTURE(name);
    TempDir tmp;
    SimulateOptions o;
    o.scenario = (kSourceDir / "scenarios" / (std::string(name) + ".json")).string();
    o.json = tmp.file("symmetric.json");
    REQUIRE(simulate(o).code == kExitOk);
    o.full = true;
    o.json = tmp.file("full.json");
    const Run r = simulate(o);
    REQUIRE_MESSAGE(r.code == kExitOk, r.err);
    CHECK(r.out.find("(full)") != std::string::npos);
    const json sym = parse_json(read_text(tmp.file("symmetric.json")), "symmetric result");
    const json full = parse_json(read_text(tmp.file("full.json")), "full result");
    CHECK(sym.at("mode") == "symmetric");
    CHECK(full.at("mode") == "full");
    CHECK(full.at("simulated_devices") == full.at("total_gpus"));
    CHECK(full.at("step_time_s").get<double>() == sym.at("step_time_s").get<double>());
    for (const char* kind : {"tp", "pp", "dp"}) {  // no .scale(0): dp 1 (custom-cluster) sends 0
      CHECK(full.at("comm_bytes").at(kind).get<double>() ==
            doctest::Approx(sym.at("comm_bytes").at(kind).get<double>()).epsilon(1e-12));
    }
    // Each GPU peaks where the simulated device of its stage does.
    for (std::size_t d = 0; d < full.at("peak_memory_bytes").size(); ++d) {
      const auto stage = full.at("memory_breakdown_bytes")[d].at("stage").get<std::size_t>();
      CHECK(full.at("peak_memory_bytes")[d] == sym.at("peak_memory_bytes")[stage]);
    }
  }
}

TEST_CASE("validate accepts every shipped scenario") {
  for (const auto& file : json_files_in(kSourceDir / "scenarios")) {
    CAPTURE(file.string());
    const Run v = validate(file.string());
    CHECK(v.code == kExitOk);
    CHECK(v.err.empty());
    CHECK(v.out.rfind(file.string() + ": valid (" + file.stem().string() + ", ", 0) == 0);
  }
}

TEST_CASE("simulate reports the Shampoo/DASH host loop: ops and syncs per step") {
  SimulateOptions o;
  o.scenario = (kSourceDir / "scenarios" / "dash-llama-953m.json").string();
  o.json = "-";
  const Run r = simulate(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  const json j = parse_json(r.out, "the result JSON");
  // DASH with GPU stacking, coupled Newton x 10: one convergence read-back per iteration per
  // stack, two stacks (1024 and 256) on the busiest rank.
  CHECK(j.at("optimizer_host_syncs") == 20);
  CHECK(j.at("optimizer_host_ops") == 290);  // docs/dash.md: 250 root ops + update + grafting
  CHECK(r.err.find("optimizer host loop: ") != std::string::npos);
}

TEST_CASE("simulate: hardware figures that push times out of range are bad input, nothing written") {
  TempDir tmp;
  const std::string path = tmp.file("slow.json");
  std::ofstream(path) << R"({"model": "gpt2-medium",
    "cluster": {"preset": "dgx-a100-80gb", "device": {"hbm_bandwidth": "1 B/s"}},
    "training": {"global_batch": 8}, "parallel": {"dp": 8, "dp_bucket": "25 MB"}})";
  SimulateOptions o;
  o.scenario = path;
  o.json = tmp.file("result.json");
  const Run r = simulate(o);
  CHECK(r.code == kExitBadInput);
  CHECK(r.err.find("outside the simulator's range") != std::string::npos);
  CHECK(r.err.find("a bandwidth or FLOP rate far too small") != std::string::npos);
  CHECK(!fs::exists(o.json));
}

TEST_CASE("simulate: a step of weeks, inside the engine's range, is reported like any other") {
  // 300 B/s NVLink: the gradient all-reduce (25 MB buckets, each under the range) takes about
  // 4e6 s, under sim::Time's int64 range
  // but over the 1e6 s a single conversion may reach; the report must not convert it back.
  TempDir tmp;
  const std::string path = tmp.file("slow-link.json");
  std::ofstream(path) << R"({"model": "gpt2-medium",
    "cluster": {"preset": "dgx-a100-80gb", "intra_node": {"bandwidth": "300 B/s", "latency": "1 us"}},
    "training": {"global_batch": 8}, "parallel": {"dp": 8, "dp_bucket": "25 MB"}})";
  SimulateOptions o;
  o.scenario = path;
  o.json = tmp.file("result.json");
  const Run r = simulate(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  const json j = parse_json(read_text(o.json), "the result file");
  CHECK(j.at("step_time_s").get<double>() > 1e6);
  CHECK(r.out.find("step time") != std::string::npos);
}

}  // namespace parasim::cli
