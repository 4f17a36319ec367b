#include <doctest/doctest.h>

#include <array>
#include <sstream>
#include <vector>

#include "sim/engine.hpp"
#include "time_printer.hpp"
#include "sim/trace.hpp"
#include "sim/workload.hpp"

using namespace parasim::sim;

namespace {

// One transfer of `bytes` from `from` egress to `to` ingress as a two-member group.
GroupId transfer(Workload& w, StreamId send, StreamId recv, LinkId egress, LinkId ingress,
                 double bytes, Time latency = Time::zero()) {
  std::array<StreamId, 2> members{send, recv};
  std::array<PhaseSpec, 1> phases{PhaseSpec{latency, 0, 1}};
  std::array<FlowSpec, 1> flows{FlowSpec{{egress, ingress}, bytes}};
  return w.add_group(members, phases, flows, w.intern("send"), w.intern("p2p"), -1, true, bytes);
}

}  // namespace

TEST_CASE("Engine: ops on one stream run in order; dependencies cross streams and devices") {
  Workload w;
  auto d0 = w.add_device("gpu0");
  auto d1 = w.add_device("gpu1");
  auto s0 = w.add_stream(d0, "compute");
  auto s1 = w.add_stream(d1, "compute");
  auto cat = w.intern("compute");
  auto a = w.add_compute(s0, Time::us(10), w.intern("a"), cat);
  auto b = w.add_compute(s0, Time::us(5), w.intern("b"), cat);
  auto c = w.add_compute(s1, Time::us(1), w.intern("c"), cat);
  w.add_dependency(a, c);
  auto r = Engine(w).run();
  CHECK(r.op_start[b] == Time::us(10));
  CHECK(r.op_end[b] == Time::us(15));
  CHECK(r.op_start[c] == Time::us(10));
  CHECK(r.makespan == Time::us(15));
  CHECK(r.critical_path == std::vector<OpId>{a, b});
}

TEST_CASE("Engine: two flows on one link each get half its bandwidth") {
  Workload w;
  auto d0 = w.add_device("gpu0");
  auto d1 = w.add_device("gpu1");
  auto d2 = w.add_device("gpu2");
  auto tx0 = w.add_stream(d0, "send");
  auto tx1 = w.add_stream(d1, "send");
  auto rx = w.add_stream(d2, "recv");
  auto rx2 = w.add_stream(d2, "recv2");
  auto out0 = w.add_link("gpu0.out", 100e9);
  auto out1 = w.add_link("gpu1.out", 100e9);
  auto in2 = w.add_link("gpu2.in", 100e9);
  // 1 GB each over a shared 100 GB/s ingress: alone 10 ms; together 20 ms each.
  auto g0 = transfer(w, tx0, rx, out0, in2, 1e9);
  auto g1 = transfer(w, tx1, rx2, out1, in2, 1e9);
  auto r = Engine(w).run();
  CHECK(r.op_end[w.members(g0)[0]] == Time::ms(20));
  CHECK(r.op_end[w.members(g1)[0]] == Time::ms(20));
  CHECK(r.link_bytes[in2] == doctest::Approx(2e9).scale(0));
}

TEST_CASE("Engine: max-min fairness gives a flow held back elsewhere less, the other more") {
  Workload w;
  std::array<DeviceId, 4> d{w.add_device("a"), w.add_device("b"), w.add_device("c"),
                            w.add_device("e")};
  auto sa = w.add_stream(d[0], "s");
  auto sb = w.add_stream(d[1], "s");
  auto sc = w.add_stream(d[2], "s");
  auto se = w.add_stream(d[3], "s");
  auto shared = w.add_link("shared", 10e9);
  auto narrow = w.add_link("narrow", 2e9);
  auto wide = w.add_link("wide", 100e9);
  // Flow X: shared + narrow (gets 2 GB/s). Flow Y: shared + wide (gets the other 8 GB/s).
  auto gx = transfer(w, sa, sb, shared, narrow, 2e9);   // 1 s at 2 GB/s
  auto gy = transfer(w, sc, se, shared, wide, 8e9);     // 1 s at 8 GB/s
  auto r = Engine(w).run();
  CHECK(r.op_end[w.members(gx)[0]].to_seconds() == doctest::Approx(1.0).epsilon(1e-9).scale(0));
  CHECK(r.op_end[w.members(gy)[0]].to_seconds() == doctest::Approx(1.0).epsilon(1e-9).scale(0));
}

TEST_CASE("Engine: a flow with its own rate cap leaves the rest of the link to the others") {
  // A fully connected mesh: one peer link carries 64 GB/s of a 448 GB/s port (FlowSpec cap).
  // `caps`: one flow per entry from gpu0 to its own receiver, 64 MB at that cap (0: none) and
  // 384 MB uncapped; returns each flow's end in seconds.
  auto run = [](std::vector<double> caps) {
    Workload w;
    auto sender = w.add_device("gpu0");
    auto out = w.add_link("gpu0.out", 448e9);
    std::vector<GroupId> groups;
    for (std::size_t i = 0; i < caps.size(); ++i) {
      auto send = w.add_stream(sender, "send");
      auto recv = w.add_stream(w.add_device("peer"), "recv");
      auto in = w.add_link("peer.in", 448e9);
      const double bytes = caps[i] > 0 ? 64e6 : 384e6;
      std::array<StreamId, 2> members{send, recv};
      std::array<PhaseSpec, 1> phases{PhaseSpec{Time::zero(), 0, 1}};
      std::array<FlowSpec, 1> flows{FlowSpec{{out, in}, bytes, 0, caps[i]}};
      groups.push_back(
          w.add_group(members, phases, flows, w.intern("x"), w.intern("p2p"), -1, true, bytes));
    }
    const auto r = Engine(w).run();
    std::vector<double> ends;
    for (GroupId g : groups) ends.push_back(r.op_end[w.members(g)[0]].to_seconds());
    return ends;
  };
  // Beside an uncapped flow on the same port: 64 and 384 GB/s (1 ms each), not 224 GB/s each.
  const auto both = run({64e9, 0});
  CHECK(both[0] == doctest::Approx(1e-3).epsilon(1e-9).scale(0));
  CHECK(both[1] == doctest::Approx(1e-3).epsilon(1e-9).scale(0));
  // Alone, a capped flow runs at its cap: 64 MB in 1 ms.
  CHECK(run({64e9})[0] == doctest::Approx(1e-3).epsilon(1e-9).scale(0));
}

TEST_CASE("Engine: a flow speeds up when its competitor ends") {
  Workload w;
  auto d0 = w.add_device("gpu0");
  auto d1 = w.add_device("gpu1");
  auto s0 = w.add_stream(d0, "a");
  auto s1 = w.add_stream(d0, "b");
  auto r0 = w.add_stream(d1, "a");
  auto r1 = w.add_stream(d1, "b");
  auto out = w.add_link("out", 1e9);
  auto in = w.add_link("in", 1e9);
  auto small = transfer(w, s0, r0, out, in, 0.5e9);  // shares 0.5 GB/s for 1 s, done
  auto big = transfer(w, s1, r1, out, in, 1.5e9);    // 0.5 GB in 1 s, then 1 GB alone in 1 s
  auto r = Engine(w).run();
  CHECK(r.op_end[w.members(small)[0]].to_seconds() == doctest::Approx(1.0).scale(0));
  CHECK(r.op_end[w.members(big)[0]].to_seconds() == doctest::Approx(2.0).scale(0));
}

TEST_CASE("Engine: a collective starts when every member has reached it") {
  Workload w;
  auto d0 = w.add_device("gpu0");
  auto d1 = w.add_device("gpu1");
  auto c0 = w.add_stream(d0, "compute");
  auto c1 = w.add_stream(d1, "compute");
  auto cat = w.intern("x");
  w.add_compute(c0, Time::us(3), w.intern("short"), cat);
  w.add_compute(c1, Time::us(7), w.intern("long"), cat);
  auto l0 = w.add_link("l0", 1e9);
  auto l1 = w.add_link("l1", 1e9);
  std::array<StreamId, 2> members{c0, c1};
  std::array<PhaseSpec, 2> phases{PhaseSpec{Time::us(1), 0, 2}, PhaseSpec{Time::us(2), 0, 0}};
  std::array<FlowSpec, 2> flows{FlowSpec{{l0, kNone}, 1000}, FlowSpec{{l1, kNone}, 1000}};
  auto g = w.add_group(members, phases, flows, w.intern("allreduce"), cat);
  auto r = Engine(w).run();
  // Starts at 7 us (last arrival); 1 us latency, 1 us to move 1000 B at 1 GB/s, 2 us latency.
  for (OpId m : w.members(g)) CHECK(r.op_end[m] == Time::us(11));
  CHECK(r.op_start[w.members(g)[0]] == Time::us(3));  // waited on its stream from 3 us
}

TEST_CASE("Engine: a dependency cycle is reported naming its ops") {
  Workload w;
  auto d = w.add_device("gpu0");
  auto s = w.add_stream(d, "compute");
  auto s2 = w.add_stream(d, "other");
  auto cat = w.intern("x");
  auto a = w.add_compute(s, Time::us(1), w.intern("alpha"), cat);
  auto b = w.add_compute(s, Time::us(1), w.intern("beta"), cat);
  auto c = w.add_compute(s2, Time::us(1), w.intern("gamma"), cat);
  w.add_dependency(b, c);
  w.add_dependency(c, a);  // alpha -> beta (stream) -> gamma -> alpha
  auto check = check_task_graph(w);
  CHECK_FALSE(check.acyclic);
  CHECK(check.cycle.size() == 3);
  CHECK(check.message.find("alpha") != std::string::npos);
  CHECK(check.message.find("beta") != std::string::npos);
  CHECK(check.message.find("gamma") != std::string::npos);
  CHECK_THROWS_AS(Engine(w).run(), WorkloadError);
}

TEST_CASE("Engine: memory ledger tracks peak and its breakdown") {
  Workload w;
  auto d = w.add_device("gpu0");
  auto s = w.add_stream(d, "compute");
  auto act = w.memory_category("activations");
  auto wts = w.memory_category("weights");
  w.set_base_memory(d, wts, 1000);
  auto cat = w.intern("x");
  auto f1 = w.add_compute(s, Time::us(1), w.intern("f1"), cat);
  auto f2 = w.add_compute(s, Time::us(1), w.intern("f2"), cat);
  auto b2 = w.add_compute(s, Time::us(1), w.intern("b2"), cat);
  w.set_memory(f1, act, 100, 0);
  w.set_memory(f2, act, 100, 0);
  w.set_memory(b2, act, 0, -100);
  auto r = Engine(w, {.check_graph = true, .record_memory_timeline = true}).run();
  CHECK(r.peak_memory_bytes[d] == 1200);
  CHECK(r.peak_breakdown_bytes[d][act] == 200);
  CHECK(r.peak_breakdown_bytes[d][wts] == 1000);
  CHECK(r.memory_timeline.size() == 4);
}

TEST_CASE("Engine: the same input twice gives identical trace bytes") {
  auto build_and_trace = [] {
    Workload w;
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
      auto g = transfer(w, p0, p1, out, in, 1e6, Time::us(2));
      w.add_dependency(f0, w.members(g)[0]);
      auto f1 = w.add_compute(c1, Time::us(10), w.intern("F"), cat, mb);
      w.add_dependency(w.members(g)[1], f1);
    }
    auto r = Engine(w, {.check_graph = true, .record_memory_timeline = true}).run();
    std::ostringstream out_stream;
    write_chrome_trace(out_stream, w, r);
    return out_stream.str();
  };
  const std::string first = build_and_trace();
  const std::string second = build_and_trace();
  CHECK(first == second);
  CHECK(first.find("\"ph\":\"X\"") != std::string::npos);
  CHECK(first.find("\"ph\":\"s\"") != std::string::npos);
  CHECK(first.find("\"ph\":\"f\"") != std::string::npos);
  CHECK(first.find("\"ph\":\"C\"") != std::string::npos);
  CHECK(first.find("\"thread_name\"") != std::string::npos);
}

TEST_CASE("Engine: a stream with several queues starts the first ready head, by priority") {
  // Queue 0 ("backward") has priority over queue 1 ("forward"). b1 becomes ready at 5 us, exactly
  // when f0 ends: the decision at 5 us picks b1 over the ready f1.
  Workload w;
  auto d = w.add_device("gpu0");
  auto s = w.add_stream(d, "compute");
  auto other = w.add_stream(d, "other");
  auto cat = w.intern("x");
  auto f0 = w.add_compute(s, Time::us(5), w.intern("f0"), cat, -1, 1);
  auto f1 = w.add_compute(s, Time::us(5), w.intern("f1"), cat, -1, 1);
  auto gate = w.add_compute(other, Time::us(5), w.intern("gate"), cat);
  auto b1 = w.add_compute(s, Time::us(1), w.intern("b1"), cat, -1, 0);
  w.add_dependency(gate, b1);
  auto r = Engine(w).run();
  CHECK(r.op_start[f0] == Time::zero());
  CHECK(r.op_start[b1] == Time::us(5));
  CHECK(r.op_start[f1] == Time::us(6));
  CHECK(r.makespan == Time::us(11));
}
