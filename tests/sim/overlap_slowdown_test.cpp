// Workload::set_overlap_slowdown: computation and communication on one device slow each other
// by the calibrated factors, applied when an op or phase starts.
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

TEST_CASE("Overlap slowdown: a compute op starting during a transfer is slowed by the compute "
          "factor") {
  // The transfer runs from 1 to 11 us; the 10 us op starts at 2 us, while it is in flight.
  TwoDevices t(true);
  t.w.set_overlap_slowdown(1.25, 1.0);
  const SimResult r = Engine(t.w).run();
  CHECK(r.op_end[t.gemm] == Time::us(2 + 12.5));
  CHECK(r.op_end[t.w.members(t.transfer)[0]] == Time::us(11));
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
