#include <doctest/doctest.h>

#include "sim/event_queue.hpp"
#include "sim/time.hpp"

using parasim::sim::EventQueue;
using parasim::sim::Time;

TEST_CASE("Time: named constructors are exact in picoseconds") {
  CHECK(Time::us(1.5).picoseconds() == 1'500'000);
  CHECK(Time::ns(2).picoseconds() == 2'000);
  CHECK(Time::seconds(1).picoseconds() == 1'000'000'000'000);
  CHECK(Time::ms(3) == Time::us(3000));
  CHECK((Time::us(3) - Time::us(1)).to_us() == doctest::Approx(2.0).scale(0));
  CHECK(Time::us(1) / Time::us(4) == doctest::Approx(0.25).scale(0));
}

TEST_CASE("EventQueue: order is (time, priority, insertion sequence)") {
  EventQueue q;
  q.push(Time::us(2), 0, 1, 10);
  q.push(Time::us(1), 5, 1, 20);
  q.push(Time::us(1), 0, 1, 30);
  q.push(Time::us(1), 0, 1, 31);
  q.push(Time::us(1), 5, 1, 21);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().a);
  CHECK(order == std::vector<std::uint32_t>{30, 31, 20, 21, 10});
}

TEST_CASE("Time refuses to wrap: conversions and arithmetic outside the range throw") {
  using parasim::sim::Time;
  using parasim::sim::TimeRangeError;
  CHECK_THROWS_AS(Time::seconds(2e6), TimeRangeError);
  CHECK_THROWS_AS(Time::seconds(std::numeric_limits<double>::quiet_NaN()), TimeRangeError);
  CHECK(Time::seconds(1e5).to_seconds() == 1e5);
  const Time big = Time::seconds(9e5);
  Time sum = big;
  CHECK_THROWS_AS(
      [&] {
        for (int i = 0; i < 20; ++i) sum += big;  // 1.89e7 s > 9.2e6 s
      }(),
      TimeRangeError);
  CHECK_THROWS_AS(big * 100, TimeRangeError);
  CHECK_THROWS_AS(Time::zero() - big - big - big - big - big - big - big - big - big - big - big,
                  TimeRangeError);
}
