// kernels::summarize(): median, p20 and p80 by type-7 interpolation (R's default, NumPy's
// "linear": position q (n - 1) between the sorted samples), and its argument checks.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "kernels/timing_stats.hpp"

namespace pk = parasim::kernels;

TEST_CASE("summarize interpolates between order statistics (type 7)") {
  // n = 5: positions 0.8 (p20), 2 (median), 3.2 (p80) of 1 2 3 4 5.
  const pk::TimingStats five = pk::summarize({5.0, 1.0, 4.0, 2.0, 3.0});
  CHECK(five.median_s == doctest::Approx(3.0).scale(0));
  CHECK(five.p20_s == doctest::Approx(1.8).scale(0));
  CHECK(five.p80_s == doctest::Approx(4.2).scale(0));
  CHECK(five.samples == 5);

  // n = 4: positions 0.6, 1.5, 2.4 of 10 20 30 40.
  const pk::TimingStats four = pk::summarize({40.0, 10.0, 30.0, 20.0});
  CHECK(four.median_s == doctest::Approx(25.0).scale(0));
  CHECK(four.p20_s == doctest::Approx(16.0).scale(0));
  CHECK(four.p80_s == doctest::Approx(34.0).scale(0));
  CHECK(four.samples == 4);

  // n = 2: positions 0.2, 0.5, 0.8 of 0 10.
  const pk::TimingStats two = pk::summarize({10.0, 0.0});
  CHECK(two.median_s == doctest::Approx(5.0).scale(0));
  CHECK(two.p20_s == doctest::Approx(2.0).scale(0));
  CHECK(two.p80_s == doctest::Approx(8.0).scale(0));
}

TEST_CASE("summarize of one sample is that sample") {
  const pk::TimingStats one = pk::summarize({7e-6});
  CHECK(one.median_s == 7e-6);
  CHECK(one.p20_s == 7e-6);
  CHECK(one.p80_s == 7e-6);
  CHECK(one.samples == 1);
}

TEST_CASE("one outlier does not move the median") {
  const pk::TimingStats stats = pk::summarize({1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1e3});
  CHECK(stats.median_s == doctest::Approx(1.0).scale(0));
  CHECK(stats.p80_s == doctest::Approx(1.0).scale(0));
}

TEST_CASE("summarize rejects empty, negative and non-finite samples") {
  CHECK_THROWS_AS(pk::summarize({}), std::invalid_argument);
  CHECK_THROWS_AS(pk::summarize({1.0, -1e-9}), std::invalid_argument);
  CHECK_THROWS_AS(pk::summarize({1.0, std::nan("")}), std::invalid_argument);
  CHECK_THROWS_AS(pk::summarize({std::numeric_limits<double>::infinity()}),
                  std::invalid_argument);
  CHECK_NOTHROW(pk::summarize({0.0}));
}
