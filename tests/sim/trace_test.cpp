// Chrome trace export (sim/trace.hpp): the size counted before writing is exact, and a
// TraceFilter keeps the devices and the time window asked for.
#include "sim/trace.hpp"

#include <doctest/doctest.h>

#include <array>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "sim/engine.hpp"
#include "sim/workload.hpp"

using namespace parasim::sim;
using nlohmann::json;

namespace {

// Two devices: 8 forwards of 10 us on gpu0, each followed by a 1 MB transfer to gpu1 and a
// forward there; every forward on gpu0 allocates 4096 bytes (memory counter samples).
struct Pipeline {
  Workload w;
  SimResult r;
  Pipeline() {
    auto d0 = w.add_device("gpu0");
    auto d1 = w.add_device("gpu1");
    auto c0 = w.add_stream(d0, "compute");
    auto p0 = w.add_stream(d0, "pp-send");
    auto p1 = w.add_stream(d1, "pp-recv");
    auto c1 = w.add_stream(d1, "compute");
    auto out = w.add_link("gpu0.out", 50e9);
    auto in = w.add_link("gpu1.in", 50e9);
    auto cat = w.intern("fwd");
    auto mem = w.memory_category("activations");
    for (int mb = 0; mb < 8; ++mb) {
      auto f0 = w.add_compute(c0, Time::us(10), w.intern("F"), cat, mb);
      w.set_memory(f0, mem, 4096, 0);
      std::array<StreamId, 2> members{p0, p1};
      std::array<PhaseSpec, 1> phases{PhaseSpec{Time::us(2), 0, 1}};
      std::array<FlowSpec, 1> flows{FlowSpec{{out, in}, 1e6}};
      auto g = w.add_group(members, phases, flows, w.intern("send"), w.intern("p2p"), -1, true,
                           1e6);
      w.add_dependency(f0, w.members(g)[0]);
      auto f1 = w.add_compute(c1, Time::us(10), w.intern("F"), cat, mb);
      w.add_dependency(w.members(g)[1], f1);
    }
    r = Engine(w, {.check_graph = true, .record_memory_timeline = true}).run();
  }
};

std::multiset<std::string> phases_of(const json& trace) {
  std::multiset<std::string> phases;
  for (const auto& e : trace.at("traceEvents")) phases.insert(e.at("ph").get<std::string>());
  return phases;
}

}  // namespace

TEST_CASE("chrome_trace_size is exactly what chrome_trace writes, filtered or not") {
  const Pipeline p;
  TraceFilter only_gpu1;
  only_gpu1.devices = {false, true};
  TraceFilter window;
  window.start = Time::us(30);
  window.end = Time::us(50);
  for (const TraceFilter& f : {TraceFilter{}, only_gpu1, window}) {
    const std::string text = chrome_trace(p.w, p.r, f);
    const TraceSize size = chrome_trace_size(p.w, p.r, f);
    CHECK(size.bytes == text.size());
    CHECK(size.events == json::parse(text).at("traceEvents").size());
  }
}

TEST_CASE("TraceFilter devices: only their metadata, ops and counters; arrows need both ends") {
  const Pipeline p;
  const json all = json::parse(chrome_trace(p.w, p.r));
  CHECK(phases_of(all).count("X") == p.w.op_count());
  CHECK(phases_of(all).count("s") == 8);

  TraceFilter only_gpu0;
  only_gpu0.devices = {true, false};
  const json part = json::parse(chrome_trace(p.w, p.r, only_gpu0));
  for (const auto& e : part.at("traceEvents")) CHECK(e.at("pid") == 0);
  // gpu0 runs 8 forwards and 8 send halves; the arrows end on gpu1, so none is kept.
  CHECK(phases_of(part).count("X") == 16);
  CHECK(phases_of(part).count("s") == 0);
  CHECK(phases_of(part).count("f") == 0);
  std::size_t gpu0_counters = 0;
  for (const auto& e : all.at("traceEvents")) gpu0_counters += e.at("ph") == "C" && e.at("pid") == 0;
  CHECK(gpu0_counters > 0);
  CHECK(phases_of(part).count("C") == gpu0_counters);
}

TEST_CASE("TraceFilter window: ops overlapping it, and the memory level at its start") {
  const Pipeline p;
  TraceFilter window;
  window.start = Time::us(30);
  window.end = Time::us(50);
  const json part = json::parse(chrome_trace(p.w, p.r, window));
  std::size_t ops = 0;
  for (OpId o = 0; o < p.w.op_count(); ++o) {
    if (p.r.op_end[o] >= window.start && p.r.op_start[o] <= window.end) ++ops;
  }
  CHECK(ops > 0);
  CHECK(ops < p.w.op_count());
  std::size_t drawn = 0;
  double first_counter_us = 1e300;
  for (const auto& e : part.at("traceEvents")) {
    const std::string ph = e.at("ph").get<std::string>();
    if (ph == "X") {
      ++drawn;
      const double ts = e.at("ts").get<double>(), dur = e.at("dur").get<double>();
      CHECK(ts + dur >= 30.0);
      CHECK(ts <= 50.0);
    } else if (ph == "C" && e.at("pid") == 0) {
      first_counter_us = std::min(first_counter_us, e.at("ts").get<double>());
    }
  }
  // Transfers are drawn from their start as a group, which the op filter uses too.
  CHECK(drawn == ops);
  // gpu0's forwards allocate at 0, 10, 20, 30, ... us: the one at 20 us is its level at 30 us.
  CHECK(first_counter_us == 20.0);
  // Metadata stays whole: the lanes are named even where a window holds nothing.
  CHECK(phases_of(part).count("M") == phases_of(json::parse(chrome_trace(p.w, p.r))).count("M"));
}
