// Workload::set_overlap_slowdown: computation and communication on one device slow each other
// by the calibrated factors: compute for as long as the overlap lasts, communication from the
// phase's start.
#include <doctest/doctest.h>

#include <array>

#include "sim/engine.hpp"
#include "sim/workload.hpp"
#include "time_printer.hpp"

using namespace parasim::sim;

namespace {

struct TwoDevices {
  Workload w;
  StreamId compute0, comm0, comm1;
  OpId warmup, gemm;
  GroupId transfer;

  // Device 0's compute stream runs a warm-up op (2 us, or 0.5 us), then a 10 us op. Its comm
  // stream runs a 1 us op, then a 1 MB transfer at 100 GB/s (10 us) to device 1, from t = 1 us.
  explicit TwoDevices(bool transfer_first) {
    const DeviceId d0 = w.add_device("gpu0"), d1 = w.add_device("gpu1");
    compute0 = w.add_stream(d0, "compute");
    comm0 = w.add_stream(d0, "comm");
    comm1 = w.add_stream(d1, "comm");
    const LinkId out0 = w.add_link("gpu0.out", 100e9), in1 = w.add_link("gpu1.in", 100e9);
    const LabelId cat = w.intern("c");
    warmup = w.add_compute(compute0, Time::us(transfer_first ? 2 : 0.5), w.intern("warm"), cat);
    gemm = w.add_compute(compute0, Time::us(10), w.intern("gemm"), cat);
    const std::array<StreamId, 2> members{comm0, comm1};
    w.add_compute(comm0, Time::us(1), w.intern("delay"), cat);
    const std::array<PhaseSpec, 1> phases{PhaseSpec{Time::zero(), 0, 1}};
    const std::array<FlowSpec, 1> flows{FlowSpec{{out0, in1}, 1e6}};
    transfer = w.add_group(members, phases, flows, w.intern("send"), cat);
  }
};

}  // namespace

TEST_CASE("Overlap slowdown: factors of 1 change nothing") {
  TwoDevices t(true);
  const SimResult r = Engine(t.w).run();
  CHECK(r.op_end[t.gemm] == Time::us(12));
  CHECK(r.op_end[t.w.members(t.transfer)[0]] == Time::us(11));
}

TEST_CASE("Overlap slowdown: a compute op runs at 1 / the compute factor while a transfer is "
          "in flight") {
  // The transfer runs from 1 to 11 us. The 2 us warm-up runs 1 us alone, then its last 1 us at
  // 1/1.25 (1.25 us): it ends at 2.25 us. The 10 us op then runs 8.75 us at 1/1.25 (7 us of its
  // work) and its last 3 us alone after 11 us.
  TwoDevices t(true);
  t.w.set_overlap_slowdown(1.25, 1.0);
  const SimResult r = Engine(t.w).run();
  CHECK(r.op_end[t.warmup] == Time::us(2.25));
  CHECK(r.op_end[t.gemm] == Time::us(11 + 3));
  CHECK(r.op_end[t.w.members(t.transfer)[0]] == Time::us(11));
  // Started before the transfer: 0.5 us alone, 10 us slowed (8 us of work), 1.5 us alone.
  TwoDevices before(false);
  before.w.set_overlap_slowdown(1.25, 1.0);
  const SimResult b = Engine(before.w).run();
  CHECK(b.op_end[before.gemm] == Time::us(0.5 + 0.5 + 10 + 1.5));
}

TEST_CASE("Overlap slowdown: a compute op inside a transfer lasts exactly the factor x longer") {
  // gpu0 computes 2 us, then 4 us; its 1 MB transfer at 100 GB/s runs from 0 to 10 us.
  Workload w;
  const DeviceId d0 = w.add_device("gpu0"), d1 = w.add_device("gpu1");
  const StreamId compute = w.add_stream(d0, "compute"), comm0 = w.add_stream(d0, "comm"),
                 comm1 = w.add_stream(d1, "comm");
  const LinkId out0 = w.add_link("gpu0.out", 100e9), in1 = w.add_link("gpu1.in", 100e9);
  const LabelId cat = w.intern("c");
  w.add_compute(compute, Time::us(2), w.intern("first"), cat);
  const OpId inside = w.add_compute(compute, Time::us(4), w.intern("inside"), cat);
  const std::array<StreamId, 2> members{comm0, comm1};
  const std::array<PhaseSpec, 1> phases{PhaseSpec{Time::zero(), 0, 1}};
  const std::array<FlowSpec, 1> flows{FlowSpec{{out0, in1}, 1e6}};
  w.add_group(members, phases, flows, w.intern("send"), cat);
  w.set_overlap_slowdown(1.25, 1.0);
  const SimResult r = Engine(w).run();
  CHECK(r.op_start[inside] == Time::us(2.5));  // the first op was slowed from its start too
  CHECK(r.op_end[inside] == Time::us(2.5 + 5));
}

TEST_CASE("Overlap slowdown: a transfer of no duration slows nothing") {
  Workload w;
  const DeviceId d0 = w.add_device("gpu0"), d1 = w.add_device("gpu1");
  // The comm streams come first, so the empty group starts first and the op starts while it is
  // (for no time) in flight.
  const StreamId comm0 = w.add_stream(d0, "comm"), comm1 = w.add_stream(d1, "comm"),
                 compute = w.add_stream(d0, "compute");
  const LabelId cat = w.intern("c");
  const OpId gemm = w.add_compute(compute, Time::us(10), w.intern("gemm"), cat);
  const std::array<StreamId, 2> members{comm0, comm1};
  const std::array<PhaseSpec, 1> phases{PhaseSpec{Time::zero(), 0, 0}};
  w.add_group(members, phases, {}, w.intern("empty"), cat);
  w.set_overlap_slowdown(2.0, 1.0);
  CHECK(Engine(w).run().op_end[gemm] == Time::us(10));
}

TEST_CASE("Overlap slowdown: a transfer starting during compute carries the communication "
          "factor") {
  // The 10 us op runs from 0.5 to 10.5 us; the transfer starts at 1 us, while it runs: its
  // 1 MB moves as 1.5 MB, 15 us at 100 GB/s.
  TwoDevices t(false);
  t.w.set_overlap_slowdown(1.0, 1.5);
  const SimResult r = Engine(t.w).run();
  CHECK(r.op_end[t.gemm] == Time::us(10.5));
  CHECK(r.op_end[t.w.members(t.transfer)[0]] == Time::us(16));
}

TEST_CASE("Overlap slowdown: factors below 1 are refused") {
  Workload w;
  CHECK_THROWS_AS(w.set_overlap_slowdown(0.9, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(w.set_overlap_slowdown(1.0, 0.5), std::invalid_argument);
}
