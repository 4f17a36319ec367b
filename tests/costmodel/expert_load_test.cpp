#include "costmodel/expert_load.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

using namespace parasim::cost;

namespace {

bool rel_eq(double got, double want, double tol) {
  return std::abs(got - want) <= tol * std::abs(want);
}

constexpr double kPi = 3.14159265358979323846;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

ExpertLoadInput input(int experts, int top_k, int ep, double tokens, double max_violation = 0,
                      double capacity_factor = 0) {
  return ExpertLoadInput{.experts = experts,
                         .top_k = top_k,
                         .ep = ep,
                         .tokens = tokens,
                         .max_violation = max_violation,
                         .capacity_factor = capacity_factor};
}

}  // namespace

TEST_CASE("expected maximum of n standard normals matches tabulated values") {
  CHECK(expected_max_standard_normal(1) == 0);
  CHECK(rel_eq(expected_max_standard_normal(2), 1 / std::sqrt(kPi), 1e-6));
  CHECK(rel_eq(expected_max_standard_normal(3), 1.5 / std::sqrt(kPi), 1e-6));
  CHECK(rel_eq(expected_max_standard_normal(4), 1.0293754, 1e-6));
  CHECK(rel_eq(expected_max_standard_normal(5), 1.1629645, 1e-6));
  CHECK(rel_eq(expected_max_standard_normal(8), 1.4236003, 1e-6));
  CHECK(rel_eq(expected_max_standard_normal(10), 1.5387527, 1e-6));
  // 2.50759 in the usual tables; 2.5075936 by two independent quadratures (Simpson over the
  // density and over 1 - Phi^n, 4e5 intervals each), which agree to 1e-10.
  CHECK(rel_eq(expected_max_standard_normal(100), 2.5075936, 1e-6));
  CHECK(rel_eq(expected_max_standard_normal(65536), 4.2911293, 1e-6));
  CHECK_THROWS_AS(expected_max_standard_normal(0), std::invalid_argument);
  CHECK_THROWS_AS(expected_max_standard_normal(-3), std::invalid_argument);
}

TEST_CASE("expected maximum of n standard normals increases with n") {
  double previous = 0;
  for (int n = 2; n <= 1 << 20; n *= 2) {
    const double z = expected_max_standard_normal(n);
    CHECK(z > previous);
    previous = z;
  }
}

TEST_CASE("one EP rank receives exactly its mean") {
  for (double max_violation : {0.0, 0.04, 0.52, 2.0}) {
    const ExpertLoad load = expert_load(input(64, 6, 1, 8192, max_violation));
    CHECK(load.mean_tokens_per_rank == 6 * 8192.0);
    CHECK(load.busiest_rank_tokens == load.mean_tokens_per_rank);
    CHECK(load.rank_factor == 1);
    CHECK(load.expert_factor > 1 + max_violation);  // the busiest expert still carries noise
  }
  // Capacity factor 1 caps at the mean, which the single rank already receives.
  const ExpertLoad capped = expert_load(input(64, 6, 1, 8192, 0.52, 1));
  CHECK(capped.rank_factor == 1);
}

TEST_CASE("a balanced router's imbalance vanishes with many tokens") {
  const ExpertLoad load = expert_load(input(8, 2, 4, 1e9));
  CHECK(load.rank_factor > 1);
  CHECK(load.rank_factor < 1 + 1e-3);
  CHECK(load.expert_factor < 1 + 1e-3);
  // Sampling noise shrinks as 1/sqrt(T): a hundred times the tokens, a tenth of the excess.
  const ExpertLoad fewer = expert_load(input(8, 2, 4, 1e7));
  CHECK(rel_eq(fewer.rank_factor - 1, 10 * (load.rank_factor - 1), 1e-9));
}

TEST_CASE("E=8, k=2, ep=4, T=4096, MaxVio=0.5 by hand") {
  const double e = 8, k = 2, ep = 4, t = 4096, max_vio = 0.5;
  const double z8 = 1.4236003060, z4 = 1.0293753730;
  const double m = k * t * ep / e;  // 4096
  const double cv_skew = max_vio / z8;
  const double sd_e = std::sqrt(cv_skew * m * cv_skew * m + m * (1 - k / e));
  const double n = e / ep;  // 2 experts per rank
  const double sd_r = std::sqrt(n * cv_skew * m * cv_skew * m + n * m * (1 - k / e));

  const ExpertLoad load = expert_load(input(8, 2, 4, 4096, 0.5));
  CHECK(load.mean_tokens_per_expert == 4096);
  CHECK(load.mean_tokens_per_rank == 8192);
  CHECK(rel_eq(load.busiest_expert_tokens, m + sd_e * z8, 1e-9));
  CHECK(rel_eq(load.busiest_rank_tokens, k * t + sd_r * z4, 1e-9));
  CHECK(rel_eq(load.expert_factor, (m + sd_e * z8) / m, 1e-9));
  CHECK(rel_eq(load.rank_factor, (k * t + sd_r * z4) / (k * t), 1e-9));
  CHECK(load.dropped_fraction == 0);
  // The figures themselves (6145.52 and 10287.81 tokens).
  CHECK(rel_eq(load.busiest_expert_tokens, 6145.5194, 1e-7));
  CHECK(rel_eq(load.busiest_rank_tokens, 10287.8140, 1e-7));
}

TEST_CASE("balanced router, one expert per rank, within 2% of a Monte-Carlo reference") {
  // Expected maximum of the per-expert counts when T tokens pick top-k of E experts uniformly,
  // by Monte-Carlo elsewhere. T is the group's total, so each of the ep = E ranks routes T/E.
  struct Reference {
    double tokens_total;
    int experts;
    int top_k;
    double busiest;
  };
  const Reference references[] = {{4096, 256, 8, 160.5},
                                  {16384, 256, 8, 576.7},
                                  {4096, 128, 8, 297.1},
                                  {4096, 8, 2, 1066.5},
                                  {16384, 64, 8, 2148.8}};
  for (const Reference& r : references) {
    CAPTURE(r.tokens_total);
    CAPTURE(r.experts);
    const ExpertLoad load =
        expert_load(input(r.experts, r.top_k, r.experts, r.tokens_total / r.experts));
    CHECK(load.mean_tokens_per_expert == r.top_k * r.tokens_total / r.experts);
    CHECK(rel_eq(load.busiest_expert_tokens, r.busiest, 0.02));
    CHECK(load.busiest_rank_tokens == load.busiest_expert_tokens);  // one expert per rank
  }
}

TEST_CASE("capacity caps the busiest loads and drops the overflow") {
  const double m = 2 * 4096 * 4 / 8.0;
  const ExpertLoad dropless = expert_load(input(8, 2, 4, 4096, 0.5));

  // Capacity factor 1: everything above the mean is dropped.
  const ExpertLoad tight = expert_load(input(8, 2, 4, 4096, 0.5, 1));
  CHECK(tight.busiest_expert_tokens == m);
  CHECK(tight.busiest_rank_tokens == 8192);
  CHECK(tight.expert_factor == 1);
  CHECK(tight.rank_factor == 1);
  // a = 0: E[(X - m)+] = sd_e * phi(0).
  const double sd_e = (dropless.busiest_expert_tokens - m) / 1.4236003060;
  CHECK(rel_eq(tight.dropped_fraction, sd_e / std::sqrt(2 * kPi) / m, 1e-6));

  // Capacity factor 1.25 caps the busiest expert (1.50 x mean) and the busiest rank (1.26 x).
  const ExpertLoad some = expert_load(input(8, 2, 4, 4096, 0.5, 1.25));
  CHECK(some.expert_factor == 1.25);
  CHECK(some.busiest_rank_tokens == 1.25 * 8192);
  CHECK(some.rank_factor == 1.25);
  // Capacity factor 1.4 caps the busiest expert only.
  const ExpertLoad expert_only = expert_load(input(8, 2, 4, 4096, 0.5, 1.4));
  CHECK(expert_only.busiest_expert_tokens == 1.4 * m);
  CHECK(expert_only.busiest_rank_tokens == dropless.busiest_rank_tokens);
  const double a = 0.25 * m / sd_e;
  const double overflow = sd_e * std::exp(-a * a / 2) / std::sqrt(2 * kPi) -
                          0.25 * m * 0.5 * std::erfc(a / std::sqrt(2.0));
  CHECK(rel_eq(some.dropped_fraction, overflow / m, 1e-6));
  CHECK(some.dropped_fraction < tight.dropped_fraction);

  // A generous capacity changes nothing but a negligible drop.
  const ExpertLoad loose = expert_load(input(8, 2, 4, 4096, 0.5, 4));
  CHECK(loose.busiest_expert_tokens == dropless.busiest_expert_tokens);
  CHECK(loose.busiest_rank_tokens == dropless.busiest_rank_tokens);
  CHECK(loose.dropped_fraction >= 0);
  CHECK(loose.dropped_fraction < 1e-6);

  // An absurd skew cannot drop more than everything.
  CHECK(expert_load(input(8, 2, 4, 4096, 50, 1)).dropped_fraction == 1);
}

TEST_CASE("top_k == experts loads every expert with every token") {
  const ExpertLoad load = expert_load(input(4, 4, 2, 1000));
  CHECK(load.mean_tokens_per_expert == 2000);
  CHECK(load.busiest_expert_tokens == 2000);
  CHECK(load.expert_factor == 1);
  CHECK(load.rank_factor == 1);
  const ExpertLoad one = expert_load(input(1, 1, 1, 1000));
  CHECK(one.busiest_expert_tokens == 1000);
  CHECK(one.rank_factor == 1);
}

TEST_CASE("more skew never lowers the busiest rank") {
  for (int ep : {1, 2, 8, 64, 256}) {
    double previous_rank = 0, previous_expert = 0;
    for (double max_violation = 0; max_violation <= 3; max_violation += 0.125) {
      const ExpertLoad load = expert_load(input(256, 8, ep, 4096, max_violation));
      CAPTURE(ep);
      CAPTURE(max_violation);
      CHECK(load.busiest_rank_tokens >= previous_rank);
      CHECK(load.busiest_expert_tokens >= previous_expert);
      CHECK(load.rank_factor >= 1);
      previous_rank = load.busiest_rank_tokens;
      previous_expert = load.busiest_expert_tokens;
    }
  }
  // The published defaults: auxiliary loss skews more than the expert-bias (loss-free) router.
  const ExpertLoad aux = expert_load(input(256, 8, 64, 4096, kMaxViolationAuxLoss));
  const ExpertLoad bias = expert_load(input(256, 8, 64, 4096, kMaxViolationExpertBias));
  CHECK(aux.rank_factor > bias.rank_factor);
  CHECK(bias.rank_factor > 1);
}

TEST_CASE("expert load is deterministic") {
  const ExpertLoadInput in = input(160, 6, 32, 3000, 0.3, 1.5);
  const ExpertLoad first = expert_load(in);
  for (int i = 0; i < 100; ++i) {
    const ExpertLoad again = expert_load(in);
    CHECK(again.mean_tokens_per_expert == first.mean_tokens_per_expert);
    CHECK(again.busiest_expert_tokens == first.busiest_expert_tokens);
    CHECK(again.mean_tokens_per_rank == first.mean_tokens_per_rank);
    CHECK(again.busiest_rank_tokens == first.busiest_rank_tokens);
    CHECK(again.rank_factor == first.rank_factor);
    CHECK(again.expert_factor == first.expert_factor);
    CHECK(again.dropped_fraction == first.dropped_fraction);
  }
}

TEST_CASE("invalid expert load inputs throw") {
  const auto throws = [](ExpertLoadInput in) {
    CHECK_THROWS_AS(expert_load(in), std::invalid_argument);
  };
  const ExpertLoadInput ok = input(8, 2, 4, 4096, 0.5, 0);
  CHECK_NOTHROW(expert_load(ok));

  ExpertLoadInput in = ok;
  in.experts = 0;
  throws(in);
  in = ok;
  in.top_k = 0;
  throws(in);
  in = ok;
  in.top_k = 9;
  throws(in);
  in = ok;
  in.ep = 0;
  throws(in);
  in = ok;
  in.ep = 3;  // does not divide 8
  throws(in);
  in = ok;
  in.ep = 16;
  throws(in);
  for (double tokens : {0.0, -1.0, kNan, kInf}) {
    in = ok;
    in.tokens = tokens;
    throws(in);
  }
  for (double max_violation : {-0.1, kNan, kInf}) {
    in = ok;
    in.max_violation = max_violation;
    throws(in);
  }
  for (double capacity : {-1.0, 0.5, 0.999, kNan, kInf}) {
    in = ok;
    in.capacity_factor = capacity;
    throws(in);
  }
  throws(input(4, 4, 2, 1000, 0.1));  // top_k == experts: loads are uniform, MaxVio must be 0
  throws(input(1, 1, 1, 1000, 0.1));

  CHECK_THROWS_WITH(expert_load(input(8, 2, 3, 4096)),
                    doctest::Contains("ep must be >= 1 and divide experts"));
}
