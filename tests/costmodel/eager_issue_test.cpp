// EagerIssue: the wall time of ops issued one by one by a host loop (costmodel/eager_issue.hpp),
// exact in the host-bound, GPU-bound and synchronising cases.
#include <doctest/doctest.h>

#include "costmodel/eager_issue.hpp"

using parasim::cost::EagerIssue;
using parasim::sim::Time;

TEST_CASE("Short kernels: the host issue rate bounds the time") {
  EagerIssue issue(Time::us(10));
  issue.ops(Time::us(2), 100);
  // The last op is issued at 1000 us and runs 2 us.
  CHECK(issue.elapsed() == Time::us(1002));
  CHECK(issue.ops() == 100);
}

TEST_CASE("Long kernels: the GPU bounds the time; the host runs ahead") {
  EagerIssue issue(Time::us(10));
  issue.ops(Time::us(50), 100);
  // The first op starts after one issue; then the GPU never waits.
  CHECK(issue.elapsed() == Time::us(10 + 50 * 100));
}

TEST_CASE("A sync drains the GPU, which then waits for the next issue") {
  EagerIssue ahead(Time::us(10)), synced(Time::us(10));
  for (int it = 0; it < 3; ++it) {
    ahead.ops(Time::us(50), 2);
    synced.ops(Time::us(50), 2);
    synced.sync();
  }
  // Without syncs: 10 + 6 x 50. With them, each iteration: issue (10), two bodies (100), the
  // read-back copy issued at 20 us runs when the GPU is free (no body), the host resumes at 110.
  CHECK(ahead.elapsed() == Time::us(310));
  CHECK(synced.elapsed() == Time::us(3 * 110));
  CHECK(synced.syncs() == 3);
  CHECK(synced.ops() == 9);  // the copies count as ops
}

TEST_CASE("Zero host cost: the sum of the bodies") {
  EagerIssue issue(Time::zero());
  issue.ops(Time::us(3), 7);
  issue.sync();
  issue.op(Time::us(5));
  CHECK(issue.elapsed() == Time::us(26));
}
