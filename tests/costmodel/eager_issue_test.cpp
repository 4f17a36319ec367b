// EagerIssue: the wall time of ops issued one by one by a host loop (costmodel/eager_issue.hpp),
// exact in the host-bound, GPU-bound and synchronising cases.
#include <doctest/doctest.h>

#include "costmodel/eager_issue.hpp"

using parasim::cost::EagerIssue;
using parasim::sim::Time;

TEST_CASE("Short kernels: the host issue rate bounds the time") {
  EagerIssue issue(Time::us(10));
  issue.repeat(Time::us(2), 100);
  // The last op is issued at 1000 us and runs 2 us.
  CHECK(issue.elapsed() == Time::us(1002));
  CHECK(issue.op_count() == 100);
}

TEST_CASE("Long kernels: the GPU bounds the time; the host runs ahead") {
  EagerIssue issue(Time::us(10));
  issue.repeat(Time::us(50), 100);
  // The first op starts after one issue; then the GPU never waits.
  CHECK(issue.elapsed() == Time::us(10 + 50 * 100));
}

TEST_CASE("A sync drains the GPU, which then waits for the next issue") {
  EagerIssue ahead(Time::us(10)), synced(Time::us(10));
  for (int it = 0; it < 3; ++it) {
    ahead.repeat(Time::us(50), 2);
    synced.repeat(Time::us(50), 2);
    synced.sync();
  }
  // Without syncs: 10 + 6 x 50. With them, each iteration: the first issue (10 us), two bodies
  // (100 us); the read-back copy, issued 30 us into the iteration, runs when the GPU is free (no
  // body) and the host resumes at 110 us.
  CHECK(ahead.elapsed() == Time::us(310));
  CHECK(synced.elapsed() == Time::us(3 * 110));
  CHECK(synced.sync_count() == 3);
  CHECK(synced.op_count() == 9);  // the copies count as ops
}

TEST_CASE("Zero host cost: the sum of the bodies") {
  EagerIssue issue(Time::zero());
  issue.repeat(Time::us(3), 7);
  issue.sync();
  issue.op(Time::us(5));
  CHECK(issue.elapsed() == Time::us(26));
}

TEST_CASE("An op with its own host cost, and a sequence timed as a whole") {
  EagerIssue issue(Time::us(10));
  issue.op(Time::us(1), Time::us(2));  // issued at 2 us, done at 3 us
  CHECK(issue.elapsed() == Time::us(3));
  // 5 ops timed as 100 us in all on the GPU: the first issued at 12 us, the GPU busy until
  // 112 us; the host has issued all five by 52 us; with a sync inside it waits until 112 us.
  issue.sequence(Time::us(100), 5, 1);
  CHECK(issue.elapsed() == Time::us(112));
  CHECK(issue.op_count() == 6);
  CHECK(issue.sync_count() == 1);
  issue.op(Time::zero());  // issued after the wait
  CHECK(issue.elapsed() == Time::us(122));
  // Without a sync the host runs ahead of a long sequence.
  EagerIssue ahead(Time::us(10));
  ahead.sequence(Time::us(100), 5, 0);
  ahead.op(Time::us(1));  // issued at 60 us, runs after the sequence: 110 + 1
  CHECK(ahead.elapsed() == Time::us(111));
}

TEST_CASE("foreach launches: by chunks of 65536 elements, 320 per launch, and by 48 tensors") {
  using parasim::cost::foreach_launches;
  CHECK(foreach_launches(1, 1) == 1);
  CHECK(foreach_launches(120, 120 * 1048576.0) == 6);  // 1920 chunks
  CHECK(foreach_launches(100, 100.0) == 3);            // small tensors: the tensor limit
  CHECK(foreach_launches(0, 0) == 1);
}
