// simulate --trace-ranks / --trace-window (cli/trace_options.hpp) and the trace size.
#include "cli/trace_options.hpp"

#include <doctest/doctest.h>

#include <set>
#include <sstream>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"
#include "command_run.hpp"
#include "costmodel/units.hpp"

namespace parasim::cli {
namespace {

using namespace parasim::test;

const fs::path kScenario = kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json";

Run simulate(SimulateOptions o) {
  if (o.scenario.empty()) o.scenario = kScenario.string();
  return run_command([&](std::ostream& out, std::ostream& err) { return run_simulate(o, out, err); });
}

// The pids of the X events of a trace file.
std::set<int> traced_pids(const std::string& path) {
  std::set<int> pids;
  const nlohmann::json trace = parse_json(read_text(path), "the trace");
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") == "X") pids.insert(e.at("pid").get<int>());
  }
  return pids;
}

}  // namespace

TEST_CASE("parse_rank_list: ranks and inclusive ranges; anything else is exit-2 text") {
  const auto r = parse_rank_list("0-7, 64,3");
  REQUIRE(r.size() == 3);
  CHECK((r[0].first == 0 && r[0].last == 7));
  CHECK((r[1].first == 64 && r[1].last == 64));
  CHECK((r[2].first == 3 && r[2].last == 3));
  for (const char* bad : {"", "x", "0-", "-3", "5-2", "1,,2", "99999999999", "1.5", "0-7a"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_rank_list(bad), CommandLineError);
  }
  CHECK(format_rank_list({5, 0, 1, 2, 7, 8, 2}) == "0-2,5,7-8");
  CHECK(format_rank_list({}).empty());
}

TEST_CASE("parse_time_window: START,END with units; END after START") {
  const auto w = parse_time_window("0.5 s, 1200 ms");
  CHECK(w.first == sim::Time::ms(500));
  CHECK(w.second == sim::Time::ms(1200));
  for (const char* bad : {"1 s", "1 s,2 s,3 s", "2 s,1 s", "1 s,1 s", "1,2", "-1 s,1 s",
                          "1 GB,2 s", "0 s,1e9 s"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(parse_time_window(bad), CommandLineError);
  }
}

TEST_CASE("trace_size_notice: only a trace over 100 MB is announced, with its size") {
  CHECK(trace_size_notice({1000, 99'000'000}, "t.json").empty());
  CHECK(trace_size_notice({5'012'345, 866'300'000}, "t.json") ==
        "trace: writing 866.3 MB (5012345 events) to t.json; --trace-ranks and --trace-window "
        "write a part of it");
}

TEST_CASE("simulate --trace-ranks: only the simulated GPUs listed; the others named in a note") {
  TempDir tmp;
  SimulateOptions o;
  o.trace = tmp.file("all.json");
  const Run all = simulate(o);
  REQUIRE_MESSAGE(all.code == kExitOk, all.err);
  CHECK(traced_pids(o.trace) == std::set<int>{0, 1});  // symmetric: ranks 0 and 4, one per stage
  // The size printed is the file's.
  const std::string size = cost::format_bytes_si(cost::Bytes{static_cast<double>(fs::file_size(o.trace))});
  CHECK_MESSAGE(all.out.find("trace: " + o.trace + ", " + size + " (open in") != std::string::npos,
                all.out.substr(all.out.size() - 200));

  o.trace = tmp.file("rank4.json");
  o.trace_ranks = "4";
  const Run rank4 = simulate(o);
  REQUIRE_MESSAGE(rank4.code == kExitOk, rank4.err);
  CHECK(traced_pids(o.trace) == std::set<int>{1});
  CHECK(rank4.err.find("not simulated") == std::string::npos);

  o.trace = tmp.file("some.json");
  o.trace_ranks = "0-3";
  const Run some = simulate(o);
  REQUIRE_MESSAGE(some.code == kExitOk, some.err);
  CHECK(traced_pids(o.trace) == std::set<int>{0});
  CHECK(some.err.find("trace: ranks 1-3 are not simulated (symmetric: one GPU per stage; --full "
                      "simulates every GPU); tracing 0") != std::string::npos);

  // --full simulates every GPU: ranks 2 and 3 are devices 2 and 3 (stage 0, replica 1).
  o.full = true;
  o.trace = tmp.file("full.json");
  o.trace_ranks = "2-3";
  const Run full = simulate(o);
  REQUIRE_MESSAGE(full.code == kExitOk, full.err);
  CHECK(traced_pids(o.trace).size() == 2);
  CHECK(full.err.find("not simulated") == std::string::npos);

  o.full = false;
  for (const char* bad : {"1-3", "8", "0-x"}) {
    CAPTURE(bad);
    o.trace = tmp.file("bad.json");
    o.trace_ranks = bad;
    const Run r = simulate(o);
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.rfind("parasim simulate: --trace-ranks", 0) == 0);
    CHECK(!fs::exists(o.trace));
  }
}

TEST_CASE("simulate --trace-window: the ops overlapping it; bad windows are exit 2") {
  TempDir tmp;
  SimulateOptions o;
  o.trace = tmp.file("window.json");
  o.trace_window = "1 s,1.5 s";
  const Run r = simulate(o);
  REQUIRE_MESSAGE(r.code == kExitOk, r.err);
  std::size_t ops = 0;
  const nlohmann::json trace = parse_json(read_text(o.trace), "the trace");
  for (const auto& e : trace.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    ++ops;
    CHECK(e.at("ts").get<double>() + e.at("dur").get<double>() >= 1e6);
    CHECK(e.at("ts").get<double>() <= 1.5e6);
  }
  CHECK(ops > 100);
  CHECK(ops < 4310);  // the whole run has 4310 ops

  for (const char* bad : {"20 s,30 s", "1 s", "2 s,1 s"}) {
    CAPTURE(bad);
    o.trace_window = bad;
    o.trace = tmp.file("bad.json");
    const Run b = simulate(o);
    CHECK(b.code == kExitBadInput);
    CHECK(b.err.rfind("parasim simulate: --trace-window", 0) == 0);
    CHECK(!fs::exists(o.trace));
  }
  o.trace.clear();
  o.trace_window = "0 s,1 s";
  const Run no_trace = simulate(o);
  CHECK(no_trace.code == kExitBadInput);
  CHECK(no_trace.err.find("give --trace FILE too") != std::string::npos);
}

}  // namespace parasim::cli
