// A small fixed workload without host ops, and the op_start / op_end the engine gave it before
// host issue existed (commit 7d10714): every later change to the engine must leave a workload
// without host ops bit for bit where it was. It mixes what the engine does: two devices' compute
// and communication streams, a stream with two priority queues, dependencies across devices,
// flows sharing a link and speeding up when the other ends, phase latencies, memory deltas and
// the overlap slowdown.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

#include "sim/engine.hpp"
#include "sim/workload.hpp"
#include "time_printer.hpp"

using namespace parasim::sim;

namespace {

Workload fixed_workload() {
  Workload w;
  const DeviceId d0 = w.add_device("gpu0"), d1 = w.add_device("gpu1");
  const StreamId c0 = w.add_stream(d0, "compute"), c1 = w.add_stream(d1, "compute");
  const StreamId m0 = w.add_stream(d0, "comm"), m1 = w.add_stream(d1, "comm");
  const StreamId x0 = w.add_stream(d0, "comm2"), x1 = w.add_stream(d1, "comm2");
  const LinkId out0 = w.add_link("gpu0.out", 37e9), in1 = w.add_link("gpu1.in", 53e9);
  const LinkId out1 = w.add_link("gpu1.out", 41e9), in0 = w.add_link("gpu0.in", 29e9);
  const LabelId cat = w.intern("c");
  const std::uint8_t act = w.memory_category("activations");
  w.set_overlap_slowdown(1.07, 1.13);
  std::vector<OpId> fwd, bwd;
  for (int i = 0; i < 4; ++i) {
    fwd.push_back(w.add_compute(c0, Time::ps(3'141'593 + 1'000'003 * i), w.intern("f"), cat, i, 1));
    w.set_memory(fwd.back(), act, 1000 + i, 0);
    bwd.push_back(w.add_compute(c0, Time::ps(2'718'281 + 777'777 * i), w.intern("b"), cat, i, 0));
    w.set_memory(bwd.back(), act, 0, -(1000 + i));
    w.add_dependency(fwd.back(), bwd.back());
    // A 2-member all-gather-like group after each forward: latency, then two flows both ways.
    const std::array<StreamId, 2> members{m0, m1};
    const std::array<PhaseSpec, 2> phases{PhaseSpec{Time::ps(1'234'567), 0, 2},
                                          PhaseSpec{Time::ps(345'678), 0, 1}};
    const std::array<FlowSpec, 3> flows{FlowSpec{{out0, in1}, 1.5e5 * (i + 1)},
                                        FlowSpec{{out1, in0}, 0.9e5 * (i + 2)},
                                        FlowSpec{{out0, in1}, 2.2e4, 0, 11e9}};
    const GroupId g = w.add_group(members, phases, flows, w.intern("ag"), cat, i, false, 1e5);
    w.add_dependency(fwd.back(), w.members(g)[0]);
    w.add_dependency(w.members(g)[1], w.add_compute(c1, Time::ps(4'000'037), w.intern("g"), cat, i));
    // A transfer on the second comm streams, sharing gpu0.out with the group above.
    const std::array<StreamId, 2> pair{x0, x1};
    const std::array<PhaseSpec, 1> hop{PhaseSpec{Time::ps(99'991), 0, 1}};
    const std::array<FlowSpec, 1> bytes{FlowSpec{{out0, in1}, 3.3e5}};
    const GroupId p = w.add_group(pair, hop, bytes, w.intern("p2p"), cat, i, true, 3.3e5);
    if (i > 0) w.add_dependency(bwd[static_cast<std::size_t>(i - 1)], w.members(p)[0]);
  }
  return w;
}

}  // namespace

TEST_CASE("Engine: a workload without host ops keeps the times it had before host issue") {
  const Workload w = fixed_workload();
  const SimResult r = Engine(w).run();
  // op_start and op_end in ps, by op id, as the engine gave them before host issue, with the
  // overlap slowdown applied to the overlapped part of a compute op only (the NCCL-model change;
  // before it, a compute op that started during a transfer was slowed whole).
  const std::vector<std::int64_t> start{
      0, 3361505, 3361505, 0, 16363912, 0, 0, 6270066, 10701574, 16363912, 16363912, 38428490,
      15036794, 15036794, 14442356, 19943867, 38428490, 38428490, 69395230, 33561491, 33561491,
      24516870, 31088384, 69395230, 69395230, 91299799, 51321778, 51321778};
  const std::vector<std::int64_t> end{
      3361505, 6270066, 16363912, 16363912, 20643952, 15036794, 15036794, 10701574, 14442356,
      38428490, 38428490, 42708530, 33561491, 33561491, 19943867, 24516870, 69395230, 69395230,
      73675270, 51321778, 51321778, 31088384, 36493609, 91299799, 91299799, 95299836, 68475843,
      68475843};
  std::vector<std::int64_t> got_start, got_end;
  for (OpId o = 0; o < w.op_count(); ++o) {
    got_start.push_back(r.op_start[o].picoseconds());
    got_end.push_back(r.op_end[o].picoseconds());
  }
  CHECK(got_start == start);
  CHECK(got_end == end);
  CHECK(r.peak_memory_bytes[0] == 1003);
  CHECK(r.critical_path == std::vector<OpId>{0, 2, 3, 10, 17, 24, 25});
  CHECK(r.makespan == Time::ps(95299836));
}
