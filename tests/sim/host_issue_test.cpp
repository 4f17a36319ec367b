// Host issue (Workload::set_issue): GPU ops issued by host ops on a host stream, as an eager
// framework issues kernels. Times are exact, in picoseconds; the per-kernel closed form they are
// checked against is cost::EagerIssue (costmodel/eager_issue.hpp, header-only).
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "costmodel/eager_issue.hpp"
#include "sim/engine.hpp"
#include "sim/trace.hpp"
#include "sim/workload.hpp"
#include "time_printer.hpp"

using namespace parasim::sim;
using parasim::cost::EagerIssue;

namespace {

// One device with a host thread and a compute stream.
struct OneDevice {
  Workload w;
  DeviceId dev = w.add_device("gpu0");
  StreamId host = w.add_stream(dev, "host", StreamKind::kHost);
  StreamId gpu = w.add_stream(dev, "compute");
  LabelId host_cat = w.intern("host");
  LabelId gpu_cat = w.intern("compute");

  OpId host_op(Time duration) { return w.add_compute(host, duration, w.intern("issue"), host_cat); }
  OpId gpu_op(Time duration) { return w.add_compute(gpu, duration, w.intern("kernel"), gpu_cat); }
};

// A run of kernels (host cost h[k], GPU body b[k]) issued by one host op, cut into GPU ops of
// `per_op` kernels each (the last one may be shorter). Returns the engine's result; its GPU ops
// are ops 1, 2, ... in order (op 0 is the host op).
SimResult issued_result(const std::vector<Time>& h, const std::vector<Time>& b,
                        std::size_t per_op) {
  OneDevice d;
  Time host_total;
  for (Time x : h) host_total += x;
  const OpId host = d.host_op(host_total);
  Time issued;  // host time at which kernel k has been issued
  for (std::size_t k0 = 0; k0 < b.size(); k0 += per_op) {
    const std::size_t k1 = std::min(b.size(), k0 + per_op);
    Time first, last, body;
    for (std::size_t k = k0; k < k1; ++k) {
      issued += h[k];
      if (k == k0) first = issued;
      last = issued;
      body += b[k];
    }
    d.w.set_issue(d.gpu_op(body), host, first, last, b[k1 - 1]);
  }
  return Engine(d.w).run();
}

Time issued_run(const std::vector<Time>& h, const std::vector<Time>& b, std::size_t per_op) {
  return issued_result(h, b, per_op).makespan;
}

// When EagerIssue starts each kernel: gpu_k - b_k, with gpu_k = max(gpu_{k-1}, t_k) + b_k.
std::vector<Time> eager_starts(const std::vector<Time>& h, const std::vector<Time>& b) {
  std::vector<Time> starts;
  Time issued, gpu;
  for (std::size_t k = 0; k < b.size(); ++k) {
    issued += h[k];
    starts.push_back(max(gpu, issued));
    gpu = starts.back() + b[k];
  }
  return starts;
}

std::vector<Time> gpu_starts(const SimResult& r) {
  return {r.op_start.begin() + 1, r.op_start.end()};
}

Time eager_elapsed(const std::vector<Time>& h, const std::vector<Time>& b) {
  EagerIssue eager(Time::zero());
  for (std::size_t k = 0; k < b.size(); ++k) eager.op(b[k], h[k]);
  return eager.elapsed();
}

// The bound workload.hpp states for a chain of blocks: the largest, over blocks, of
// min(bodies but the last, issue span).
Time block_bound(const std::vector<Time>& h, const std::vector<Time>& b, std::size_t per_op) {
  Time bound, issued;
  for (std::size_t k0 = 0; k0 < b.size(); k0 += per_op) {
    const std::size_t k1 = std::min(b.size(), k0 + per_op);
    Time span, bodies;
    for (std::size_t k = k0; k < k1; ++k) {
      issued += h[k];
      if (k > k0) span += h[k];
      if (k + 1 < k1) bodies += b[k];
    }
    bound = max(bound, std::min(span, bodies));
  }
  return bound;
}

// Deterministic pseudo-random picosecond values in [lo, hi] (a 64-bit LCG, Knuth's MMIX).
std::vector<Time> values(std::size_t n, std::int64_t lo, std::int64_t hi, std::uint64_t seed) {
  std::vector<Time> out;
  for (std::size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    out.push_back(Time::ps(lo + static_cast<std::int64_t>((seed >> 33) %
                                                          static_cast<std::uint64_t>(hi - lo + 1))));
  }
  return out;
}

// Critical-path time by category, each moment counted once (as strat::make_step_report does).
std::map<std::string, Time> path_by_category(const Workload& w, const SimResult& r) {
  std::map<std::string, Time> out;
  Time covered;
  for (OpId o : r.critical_path) {
    const Time begin = max(covered, r.op_start[o]);
    if (r.op_end[o] > begin) out[w.text(w.op(o).category)] += r.op_end[o] - begin;
    covered = max(covered, r.op_end[o]);
  }
  return out;
}

}  // namespace

TEST_CASE("Host issue: one GPU op per kernel reproduces EagerIssue exactly") {
  constexpr std::size_t kN = 24;
  const Time h = Time::us(10), small = Time::us(1);
  SUBCASE("host-bound (b << h): N h + b_last") {
    const std::vector<Time> hs(kN, h), bs(kN, small);
    CHECK(issued_run(hs, bs, 1) == h * kN + small);
    CHECK(issued_run(hs, bs, 1) == eager_elapsed(hs, bs));
    CHECK(gpu_starts(issued_result(hs, bs, 1)) == eager_starts(hs, bs));  // k h for kernel k
  }
  SUBCASE("GPU-bound (b >> h): h + N b") {
    const std::vector<Time> hs(kN, small), bs(kN, h);
    CHECK(issued_run(hs, bs, 1) == small + h * kN);
    CHECK(issued_run(hs, bs, 1) == eager_elapsed(hs, bs));
  }
  SUBCASE("mixed host costs and bodies, each seed") {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const auto hs = values(kN, 1'000, 9'000'000, seed);
      const auto bs = values(kN, 1, 12'000'000, seed * 7919);
      const SimResult r = issued_result(hs, bs, 1);
      CHECK(r.makespan == eager_elapsed(hs, bs));
      CHECK(gpu_starts(r) == eager_starts(hs, bs));
    }
  }
}

TEST_CASE("Host issue: one extra event per GPU op that waits for its issue, none otherwise") {
  constexpr std::int64_t kN = 10;
  const std::vector<Time> slow(kN, Time::us(10)), fast(kN, Time::us(1));
  // Host-bound: every GPU op waits for its issue (kN issue events, kN + 1 op ends).
  CHECK(issued_result(slow, fast, 1).events_processed == 2 * kN + 1);
  // GPU-bound: only the first waits; the others were issued before their stream was free.
  CHECK(issued_result(fast, slow, 1).events_processed == kN + 2);
  // Without issue links the same ops take kN + 1 events.
  OneDevice d;
  d.host_op(Time::us(10) * kN);
  for (std::int64_t k = 0; k < kN; ++k) d.gpu_op(Time::us(1));
  CHECK(Engine(d.w).run().events_processed == kN + 1);
}

TEST_CASE("Host issue: GPU ops standing for blocks of kernels: exact at both limits, bounded between") {
  constexpr std::size_t kN = 30;
  for (std::size_t per_op : {2u, 3u, 7u, 30u}) {
    CAPTURE(per_op);
    const std::vector<Time> h(kN, Time::us(10)), b(kN, Time::us(1));
    CHECK(issued_run(h, b, per_op) == Time::us(10) * kN + Time::us(1));  // host-bound
    CHECK(issued_run(b, h, per_op) == Time::us(1) + Time::us(10) * kN);  // GPU-bound
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const auto hs = values(kN, 1'000, 9'000'000, seed);
      const auto bs = values(kN, 1, 12'000'000, seed * 104729);
      const Time exact = eager_elapsed(hs, bs);
      const Time blocks = issued_run(hs, bs, per_op);
      CHECK(blocks <= exact);
      CHECK(exact - blocks <= block_bound(hs, bs, per_op));
    }
  }
  // A block that is host-bound in its first half and GPU-bound in its second: the bound is
  // reached (kernel 2's late issue followed by long bodies is what the block cannot see).
  const std::vector<Time> hs{Time::us(1), Time::us(20), Time::us(1), Time::us(1)};
  const std::vector<Time> bs{Time::us(1), Time::us(10), Time::us(10), Time::us(1)};
  // Kernel by kernel: 2, 21 -> 31 -> 41 -> 42 us; as one block: max(1 + 22, 23 + 1) = 24 us.
  CHECK(eager_elapsed(hs, bs) == Time::us(42));
  CHECK(issued_run(hs, bs, 4) == Time::us(24));
  CHECK(block_bound(hs, bs, 4) == Time::us(21));
  CHECK(issued_run(hs, bs, 1) == Time::us(42));
}

TEST_CASE("Host issue: a sync makes the host wait for the GPU, and the next op waits for its issue") {
  OneDevice d;
  const OpId h1 = d.host_op(Time::us(2));
  const OpId g1 = d.gpu_op(Time::us(100));
  d.w.set_issue(g1, h1, Time::us(2), Time::us(2), Time::us(100));
  const OpId h2 = d.host_op(Time::us(3));
  d.w.add_dependency(g1, h2);  // a value read back: the host waits for g1
  SUBCASE("GPU-bound after the sync") {
    const OpId g2 = d.gpu_op(Time::us(5));
    d.w.set_issue(g2, h2, Time::us(1), Time::us(3), Time::us(1));
    const auto r = Engine(d.w).run();
    CHECK(r.op_end[g1] == Time::us(102));
    CHECK(r.op_start[h2] == Time::us(102));
    CHECK(r.op_start[g2] == Time::us(103));  // host_start + issue_first
    CHECK(r.op_end[g2] == Time::us(108));    // its own 5 us outlast the issue (105 + 1)
    CHECK(r.critical_path == std::vector<OpId>{h1, g1, h2, g2});
  }
  SUBCASE("host-bound after the sync: the end waits for the last kernel's issue") {
    const OpId g2 = d.gpu_op(Time::us(1.5));
    d.w.set_issue(g2, h2, Time::us(1), Time::us(3), Time::us(1));
    const auto r = Engine(d.w).run();
    CHECK(r.op_start[g2] == Time::us(103));
    CHECK(r.op_end[g2] == Time::us(106));  // 102 + 3 + 1, not 103 + 1.5
    CHECK(r.critical_path == std::vector<OpId>{h1, g1, h2, g2});
  }
}

TEST_CASE("Host issue: the host runs ahead of the GPU") {
  OneDevice d;
  const OpId h1 = d.host_op(Time::us(1));
  const OpId h2 = d.host_op(Time::us(1));
  const OpId g1 = d.gpu_op(Time::us(100));
  const OpId g2 = d.gpu_op(Time::us(100));
  d.w.set_issue(g1, h1, Time::us(1), Time::us(1), Time::us(100));
  d.w.set_issue(g2, h2, Time::us(1), Time::us(1), Time::us(100));
  const auto r = Engine(d.w).run();
  CHECK(r.op_end[h2] == Time::us(2));  // long before g1 ends
  CHECK(r.op_start[g1] == Time::us(1));
  CHECK(r.op_start[g2] == Time::us(101));  // right after g1, issued 99 us earlier
  CHECK(r.op_end[g2] == Time::us(201));
  CHECK(r.critical_path == std::vector<OpId>{h1, g1, g2});
}

TEST_CASE("Host issue: a GPU op waits for its host op to start, on any stream of its device") {
  OneDevice d;
  const StreamId side = d.w.add_stream(d.dev, "side");
  const OpId busy = d.host_op(Time::us(10));  // the host is busy first
  const OpId h = d.host_op(Time::us(4));
  const OpId g = d.gpu_op(Time::us(1));
  const OpId s = d.w.add_compute(side, Time::us(1), d.w.intern("side"), d.gpu_cat);
  d.w.set_issue(g, h, Time::us(2), Time::us(2), Time::us(1));
  d.w.set_issue(s, h, Time::zero(), Time::zero(), Time::us(1));
  const auto r = Engine(d.w).run();
  CHECK(r.op_start[h] == Time::us(10));
  CHECK(r.op_start[s] == Time::us(10));  // issue_first 0: as the host op starts
  CHECK(r.op_start[g] == Time::us(12));
  CHECK(r.op_end[g] == Time::us(13));
  CHECK(r.makespan == Time::us(14));  // the host op's end
  CHECK(r.critical_path == std::vector<OpId>{busy, h});
}

TEST_CASE("Host issue: a group member arrives only once its collective has been called") {
  Workload w;
  const DeviceId d0 = w.add_device("gpu0"), d1 = w.add_device("gpu1");
  const StreamId host0 = w.add_stream(d0, "host", StreamKind::kHost);
  const StreamId comm0 = w.add_stream(d0, "comm"), comm1 = w.add_stream(d1, "comm");
  const LabelId host_cat = w.intern("host"), comm_cat = w.intern("comm");
  const OpId before = w.add_compute(host0, Time::us(10), w.intern("forward"), host_cat);
  const OpId h = w.add_compute(host0, Time::us(6), w.intern("issue"), host_cat);
  const LinkId out0 = w.add_link("gpu0.out", 1e9), in1 = w.add_link("gpu1.in", 1e9);
  const std::array<StreamId, 2> members{comm0, comm1};
  const std::array<PhaseSpec, 1> phases{PhaseSpec{Time::us(2), 0, 1}};
  const std::array<FlowSpec, 1> flows{FlowSpec{{out0, in1}, 3000}};  // 3 us at 1 GB/s
  const GroupId g = w.add_group(members, phases, flows, w.intern("all-reduce"), comm_cat);
  const OpId m0 = w.members(g)[0], m1 = w.members(g)[1];
  w.set_issue(m0, h, Time::us(1), Time::us(4));
  const auto r = Engine(w).run();
  CHECK(r.op_start[m1] == Time::zero());       // waits at its stream head from 0
  CHECK(r.op_start[m0] == Time::us(14));       // host_start 10 + issue_last 4, not + 1
  CHECK(group_start_times(w, r)[g] == Time::us(14));
  CHECK(r.op_end[m0] == Time::us(19));         // 2 us latency + 3 us of flow; no last_body
  CHECK(r.op_end[m1] == Time::us(19));
  const auto& path = r.critical_path;
  REQUIRE(path.size() >= 3);
  CHECK(path[0] == before);
  CHECK(path[1] == h);
  CHECK(path[2] == m0);
}

TEST_CASE("Host issue: a host-bound step's critical path goes through the host, by category") {
  constexpr std::size_t kN = 16;
  OneDevice d;
  const OpId h = d.host_op(Time::us(10) * kN);
  std::vector<OpId> gpu;
  for (std::size_t k = 0; k < kN; ++k) {
    gpu.push_back(d.gpu_op(Time::us(1)));
    const Time at = Time::us(10) * static_cast<std::int64_t>(k + 1);
    d.w.set_issue(gpu.back(), h, at, at, Time::us(1));
  }
  const auto r = Engine(d.w).run();
  CHECK(r.makespan == Time::us(161));
  CHECK(r.critical_path == std::vector<OpId>{h, gpu.back()});
  const auto parts = path_by_category(d.w, r);
  CHECK(parts.at("host") == Time::us(160));
  CHECK(parts.at("compute") == Time::us(1));
}

TEST_CASE("Host issue: the end of a block held back by its last kernel's issue is the host's") {
  // The GPU op starts at its first kernel's issue (2 us) and would end at 5 us, but its last
  // kernel is issued at 9 us: it ends at 10 us and its end is the host op's doing.
  OneDevice d;
  const OpId other = d.w.add_compute(d.gpu, Time::us(1), d.w.intern("first"), d.gpu_cat);
  const OpId h = d.host_op(Time::us(9));
  const OpId g = d.gpu_op(Time::us(3));
  d.w.set_issue(g, h, Time::us(2), Time::us(9), Time::us(1));
  const auto r = Engine(d.w).run();
  CHECK(r.op_end[other] == Time::us(1));
  CHECK(r.op_start[g] == Time::us(2));
  CHECK(r.op_end[g] == Time::us(10));
  CHECK(r.critical_path == std::vector<OpId>{h, g});
}

TEST_CASE("Host issue: host ops are outside the compute/communication overlap slowdown") {
  // A host op runs during a transfer: it is not slowed, and the transfer's flows are not slowed
  // by it; a GPU op during the same transfer is (the factors are 2 and 3).
  Workload w;
  const DeviceId d0 = w.add_device("gpu0"), d1 = w.add_device("gpu1");
  const StreamId host0 = w.add_stream(d0, "host", StreamKind::kHost);
  const StreamId gpu0 = w.add_stream(d0, "compute");
  const StreamId comm0 = w.add_stream(d0, "comm"), comm1 = w.add_stream(d1, "comm");
  const LinkId out0 = w.add_link("gpu0.out", 1e9), in1 = w.add_link("gpu1.in", 1e9);
  w.set_overlap_slowdown(2.0, 3.0);
  const LabelId cat = w.intern("c");
  const std::array<StreamId, 2> members{comm0, comm1};
  const std::array<PhaseSpec, 1> phases{PhaseSpec{Time::zero(), 0, 1}};
  const std::array<FlowSpec, 1> flows{FlowSpec{{out0, in1}, 10000}};  // 10 us at 1 GB/s
  const GroupId g = w.add_group(members, phases, flows, w.intern("send"), cat);
  const OpId late = w.add_compute(comm0, Time::zero(), w.intern("after"), cat);
  const OpId host = w.add_compute(host0, Time::us(4), w.intern("issue"), cat);
  const OpId kernel = w.add_compute(gpu0, Time::us(2), w.intern("kernel"), cat);
  w.set_issue(kernel, host, Time::us(1), Time::us(1), Time::us(2));
  const auto r = Engine(w).run();
  CHECK(r.op_end[w.members(g)[0]] == Time::us(10));  // flows started while only the host ran
  CHECK(r.op_end[host] == Time::us(4));
  CHECK(r.op_start[kernel] == Time::us(1));
  CHECK(r.op_end[kernel] == Time::us(5));  // 2 us x 2 during the transfer
  CHECK(r.op_end[late] == Time::us(10));
}

TEST_CASE("Host issue: deterministic, with host lanes in the trace") {
  auto build_and_run = [] {
    Workload w;
    std::vector<StreamId> hosts, gpus, comms;
    for (int d = 0; d < 3; ++d) {
      const DeviceId dev = w.add_device("gpu" + std::to_string(d));
      hosts.push_back(w.add_stream(dev, "host", StreamKind::kHost));
      gpus.push_back(w.add_stream(dev, "compute"));
      comms.push_back(w.add_stream(dev, "comm"));
    }
    std::vector<LinkId> out, in;
    for (int d = 0; d < 3; ++d) {
      out.push_back(w.add_link("out", 50e9));
      in.push_back(w.add_link("in", 50e9));
    }
    const LabelId host_cat = w.intern("host"), gpu_cat = w.intern("compute");
    const auto ps = values(120, 1'000, 40'000'000, 42);
    std::size_t v = 0;
    std::array<OpId, 3> previous{kNone, kNone, kNone};  // each device's last collective
    for (int mb = 0; mb < 8; ++mb) {
      std::array<OpId, 3> syncs{};
      for (int d = 0; d < 3; ++d) {
        const OpId h = w.add_compute(hosts[d], ps[v++] + Time::us(1), w.intern("F"), host_cat, mb);
        // A loss read back every third micro-batch: the host waits for the last collective.
        if (mb % 3 == 0 && mb > 0) w.add_dependency(previous[d], h);
        const OpId k = w.add_compute(gpus[d], ps[v++], w.intern("F"), gpu_cat, mb);
        w.set_issue(k, h, Time::us(1), w.op(h).duration, std::min(ps[v++], w.op(k).duration));
        syncs[d] = k;
      }
      std::array<StreamId, 3> members{comms[0], comms[1], comms[2]};
      std::array<PhaseSpec, 1> phases{PhaseSpec{Time::us(3), 0, 3}};
      std::array<FlowSpec, 3> flows{FlowSpec{{out[0], in[1]}, 1e6}, FlowSpec{{out[1], in[2]}, 1e6},
                                    FlowSpec{{out[2], in[0]}, 1e6}};
      const GroupId g = w.add_group(members, phases, flows, w.intern("ar"), gpu_cat, mb);
      for (int d = 0; d < 3; ++d) {
        const OpId m = w.members(g)[static_cast<std::size_t>(d)];
        w.add_dependency(syncs[d], m);
        const OpId h = w.add_compute(hosts[d], Time::us(2), w.intern("call"), host_cat, mb);
        w.set_issue(m, h, Time::us(2), Time::us(2));
        previous[d] = m;
      }
    }
    const auto r = Engine(w).run();
    std::ostringstream trace;
    write_chrome_trace(trace, w, r);
    return std::make_pair(r, trace.str());
  };
  const auto [r1, t1] = build_and_run();
  const auto [r2, t2] = build_and_run();
  CHECK(r1.op_start == r2.op_start);
  CHECK(r1.op_end == r2.op_end);
  CHECK(r1.critical_path == r2.critical_path);
  CHECK(r1.events_processed == r2.events_processed);
  CHECK(t1 == t2);
  CHECK(t1.find(R"("args":{"name":"host"})") != std::string::npos);
  CHECK(t1.find(R"("cat":"host")") != std::string::npos);
}

TEST_CASE("Host issue: a workload without issue is unaffected by a host stream beside it") {
  OneDevice d;
  const OpId a = d.gpu_op(Time::us(3));
  const OpId b = d.gpu_op(Time::us(4));
  const OpId h = d.host_op(Time::us(100));
  const auto r = Engine(d.w).run();
  CHECK(r.op_start[a] == Time::zero());
  CHECK(r.op_end[b] == Time::us(7));
  CHECK(r.op_end[h] == Time::us(100));
}

TEST_CASE("Host issue: bad issue links are refused, saying what is wrong") {
  OneDevice d;
  const OpId h = d.host_op(Time::us(5));
  const OpId g = d.gpu_op(Time::us(2));
  const OpId g2 = d.gpu_op(Time::us(2));
  const DeviceId other = d.w.add_device("gpu1");
  const OpId elsewhere = d.w.add_compute(d.w.add_stream(other, "compute"), Time::us(1),
                                         d.w.intern("k"), d.gpu_cat);
  auto message = [&](OpId gpu, OpId host, Time first, Time last, Time body) -> std::string {
    try {
      d.w.set_issue(gpu, host, first, last, body);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  CHECK(message(g, g2, Time::zero(), Time::zero(), Time::zero()).find("host stream") !=
        std::string::npos);
  CHECK(message(h, h, Time::zero(), Time::zero(), Time::zero()).find("device stream") !=
        std::string::npos);
  CHECK(message(elsewhere, h, Time::zero(), Time::zero(), Time::zero()).find("own device") !=
        std::string::npos);
  CHECK(message(g, h, Time::us(3), Time::us(2), Time::zero()).find("issue_first") !=
        std::string::npos);
  CHECK(message(g, h, Time::us(1), Time::us(6), Time::zero()).find("host op's duration") !=
        std::string::npos);
  CHECK(message(g, h, Time::us(1), Time::us(2), Time::us(3)).find("last_body") !=
        std::string::npos);
  CHECK(message(g, h, Time::us(1), Time::us(2), Time::us(1)).empty());
  CHECK(message(g, h, Time::us(1), Time::us(2), Time::us(1)).find("already issued") !=
        std::string::npos);
}

TEST_CASE("Host issue: a host op that waits for a GPU op it issues is a deadlock, named") {
  OneDevice d;
  const OpId h = d.host_op(Time::us(5));
  const OpId g = d.gpu_op(Time::us(2));
  d.w.set_issue(g, h, Time::us(1), Time::us(1), Time::us(2));
  d.w.add_dependency(g, h);
  const auto check = check_task_graph(d.w);
  CHECK_FALSE(check.acyclic);
  CHECK(check.message.find("issue") != std::string::npos);
  CHECK(check.message.find("kernel") != std::string::npos);
  try {
    Engine(d.w, {.check_graph = false}).run();
    FAIL("no deadlock reported");
  } catch (const WorkloadError& e) {
    CHECK(std::string(e.what()).find("not issued: its host op issue never started") !=
          std::string::npos);
  }
}

TEST_CASE("Host issue: an op issued as its host op starts is seen by that instant's decision") {
  // The compute stream (added before the host stream, so it comes first in stream order) has a
  // priority-0 op issued at offset 0 by a host op starting at 5 us, and a priority-1 op that
  // becomes ready at 5 us too: priority decides, whatever the stream order.
  Workload w;
  const DeviceId dev = w.add_device("gpu0");
  const StreamId gpu = w.add_stream(dev, "compute");
  const StreamId other = w.add_stream(dev, "other");
  const StreamId host = w.add_stream(dev, "host", StreamKind::kHost);
  const LabelId cat = w.intern("c");
  w.add_compute(host, Time::us(5), w.intern("before"), cat);
  const OpId h = w.add_compute(host, Time::us(1), w.intern("issue"), cat);
  const OpId gate = w.add_compute(other, Time::us(5), w.intern("gate"), cat);
  const OpId low = w.add_compute(gpu, Time::us(1), w.intern("low"), cat, -1, 1);
  const OpId high = w.add_compute(gpu, Time::us(1), w.intern("high"), cat, -1, 0);
  w.add_dependency(gate, low);
  w.set_issue(high, h, Time::zero(), Time::zero(), Time::us(1));
  const auto r = Engine(w).run();
  CHECK(r.op_start[high] == Time::us(5));
  CHECK(r.op_start[low] == Time::us(6));
}

TEST_CASE("Host issue: a late-issued compute op keeps its end bound when the overlap slowdown "
          "rescales it") {
  // Device 0: a host op of 20 us issues a 6 us compute op at 1 us (first kernel) and 20 us (last
  // kernel, body 2 us): it may not end before 0 + 20 + 2 = 22 us. A transfer of 2 kB at 1 GB/s
  // (2 us) runs on its comm stream from 2 to 4 us, after a 2 us op; compute is slowed x2 while it
  // runs, so the op is rescaled twice (at 2 us and at 4 us). Without the bound it would end at
  // 8 us (1 us of work in [1, 2], 1 us in [2, 4] at half rate, the last 4 us after); with it,
  // both rescales keep the end at 22 us exactly.
  auto run = [](Time duration, Time issue_last, Time last_body) {
    Workload w;
    const DeviceId d0 = w.add_device("gpu0"), d1 = w.add_device("gpu1");
    const StreamId host0 = w.add_stream(d0, "host", StreamKind::kHost);
    const StreamId gpu0 = w.add_stream(d0, "compute");
    const StreamId comm0 = w.add_stream(d0, "comm"), comm1 = w.add_stream(d1, "comm");
    const LinkId out0 = w.add_link("gpu0.out", 1e9), in1 = w.add_link("gpu1.in", 1e9);
    w.set_overlap_slowdown(2.0, 1.0);
    const LabelId cat = w.intern("c");
    w.add_compute(comm0, Time::us(2), w.intern("delay"), cat);
    const std::array<StreamId, 2> members{comm0, comm1};
    const std::array<PhaseSpec, 1> phases{PhaseSpec{Time::zero(), 0, 1}};
    const std::array<FlowSpec, 1> flows{FlowSpec{{out0, in1}, 2000}};
    const GroupId g = w.add_group(members, phases, flows, w.intern("send"), cat);
    const OpId host = w.add_compute(host0, Time::us(20), w.intern("issue"), cat);
    const OpId kernel = w.add_compute(gpu0, duration, w.intern("kernel"), cat);
    w.set_issue(kernel, host, Time::us(1), issue_last, last_body);
    const auto r = Engine(w).run();
    CHECK(r.op_end[w.members(g)[0]] == Time::us(4));
    CHECK(r.op_start[kernel] == Time::us(1));
    return r.op_end[kernel];
  };
  // Issued at once (last kernel at 1 us, body 0): the rescaled work alone, 1 + 1 + 2 + 4 = 8 us.
  CHECK(run(Time::us(6), Time::us(1), Time::zero()) == Time::us(8));
  // Issued late: the bound, exactly, through both rescales.
  CHECK(run(Time::us(6), Time::us(20), Time::us(2)) == Time::us(22));
  // A long op outlasts its bound: 1 us of work in [1, 2], 1 us in [2, 4], the remaining 28 us
  // after: 32 us, not 22.
  CHECK(run(Time::us(30), Time::us(20), Time::us(2)) == Time::us(32));
  // Odd picoseconds: a bound of 19.999997 + 1.000007 us is kept to the picosecond.
  CHECK(run(Time::us(6), Time::ps(19'999'997), Time::ps(1'000'007)) == Time::ps(21'000'004));
}
