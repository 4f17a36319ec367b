#include "costmodel/expert_load.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace parasim::cost {

namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

// Integration grid for z(n): [-10, 12] in kIntervals Simpson intervals (even). Below -10 the
// integrand |x| n phi(x) Phi(x)^(n-1) <= |x| phi(x) is < 1e-20; above 12, n*phi(12) < 1e-22 for
// any int n. The peak of the maximum's density has a scale >= 0.15 for n <= 2^31, i.e. >= 15 steps
// of 0.01: against a 400000-interval reference, z(n) agrees to 1e-10 for n in 2..2^31-1.
constexpr double kLow = -10;
constexpr double kHigh = 12;
constexpr int kIntervals = 2200;

// Per node: the Simpson weight times h/3 times x*phi(x), and log Phi(x).
struct Grid {
  std::vector<double> weighted_x_phi;
  std::vector<double> log_cdf;
};

double normal_pdf(double x) {
  return kInvSqrt2Pi * std::exp(-0.5 * x * x);
}
double normal_cdf(double x) {
  return 0.5 * std::erfc(-x * kInvSqrt2);
}
double normal_upper_tail(double x) {
  return 0.5 * std::erfc(x * kInvSqrt2);
}  // 1 - Phi(x)

const Grid& grid() {
  static const Grid g = [] {
    Grid out;
    out.weighted_x_phi.resize(kIntervals + 1);
    out.log_cdf.resize(kIntervals + 1);
    const double h = (kHigh - kLow) / kIntervals;
    for (int i = 0; i <= kIntervals; ++i) {
      const double x = kLow + i * h;
      const double w = (i == 0 || i == kIntervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
      out.weighted_x_phi[i] = w * h / 3 * x * normal_pdf(x);
      // log1p keeps the upper tail's log Phi(x) ~ -(1 - Phi(x)) accurate for large n.
      out.log_cdf[i] = x < 0 ? std::log(normal_cdf(x)) : std::log1p(-normal_upper_tail(x));
    }
    return out;
  }();
  return g;
}

void check(const ExpertLoadInput& in) {
  const std::string where = "expert load: ";
  if (in.experts < 1) {
    throw std::invalid_argument(where + "experts must be >= 1, got " + std::to_string(in.experts));
  }
  if (in.top_k < 1 || in.top_k > in.experts) {
    throw std::invalid_argument(where + "top_k must be in [1, experts = " +
                                std::to_string(in.experts) + "], got " + std::to_string(in.top_k));
  }
  if (in.ep < 1 || in.experts % in.ep != 0) {
    throw std::invalid_argument(where + "ep must be >= 1 and divide experts = " +
                                std::to_string(in.experts) + ", got " + std::to_string(in.ep));
  }
  if (!std::isfinite(in.tokens) || in.tokens <= 0) {
    throw std::invalid_argument(where + "tokens must be finite and > 0, got " +
                                std::to_string(in.tokens));
  }
  if (!std::isfinite(in.max_violation) || in.max_violation < 0) {
    throw std::invalid_argument(where + "max_violation must be finite and >= 0, got " +
                                std::to_string(in.max_violation));
  }
  if (in.top_k == in.experts && in.max_violation != 0) {
    throw std::invalid_argument(
        where +
        "max_violation must be 0 when top_k == experts (every expert receives every "
        "token), got " +
        std::to_string(in.max_violation));
  }
  if (!std::isfinite(in.capacity_factor) || in.capacity_factor < 0 ||
      (in.capacity_factor > 0 && in.capacity_factor < 1)) {
    throw std::invalid_argument(where + "capacity_factor must be 0 (dropless) or >= 1, got " +
                                std::to_string(in.capacity_factor));
  }
}

// E[(X - c)+] for X ~ N(mean, sd^2).
double expected_overflow(double mean, double sd, double c) {
  if (sd == 0) return std::max(0.0, mean - c);
  const double a = (c - mean) / sd;
  return sd * normal_pdf(a) + (mean - c) * normal_upper_tail(a);
}

}  // namespace

double expected_max_standard_normal(int n) {
  if (n < 1) {
    throw std::invalid_argument("expected_max_standard_normal: n must be >= 1, got " +
                                std::to_string(n));
  }
  if (n == 1) return 0;
  const Grid& g = grid();
  const double power = n - 1.0;
  double sum = 0;
  for (int i = 0; i <= kIntervals; ++i) {
    sum += g.weighted_x_phi[i] * std::exp(power * g.log_cdf[i]);
  }
  return n * sum;
}

ExpertLoad expert_load(const ExpertLoadInput& in) {
  check(in);
  const double e = in.experts;
  const double k = in.top_k;
  const double ep = in.ep;
  const double local = e / ep;  // n experts per rank

  ExpertLoad out;
  const double m = k * in.tokens * ep / e;
  out.mean_tokens_per_expert = m;
  out.mean_tokens_per_rank = k * in.tokens;

  const double z_experts = expected_max_standard_normal(in.experts);
  const double z_ranks = expected_max_standard_normal(in.ep);
  // z(E) > 0 whenever max_violation > 0 is allowed (E >= 2 since k == E forces it to 0).
  const double cv_skew = in.max_violation == 0 ? 0.0 : in.max_violation / z_experts;
  const double skew_sd = cv_skew * m;
  const double sample_var = m * (1 - k / e);
  const double sd_expert = std::sqrt(skew_sd * skew_sd + sample_var);
  const double sd_rank = std::sqrt(local * (skew_sd * skew_sd + sample_var));

  out.busiest_expert_tokens = m + sd_expert * z_experts;
  out.busiest_rank_tokens = out.mean_tokens_per_rank + sd_rank * z_ranks;
  if (in.capacity_factor > 0) {
    const double capacity = in.capacity_factor * m;
    out.busiest_expert_tokens = std::min(out.busiest_expert_tokens, capacity);
    out.busiest_rank_tokens =
        std::min(out.busiest_rank_tokens, in.capacity_factor * out.mean_tokens_per_rank);
    out.dropped_fraction = std::min(1.0, expected_overflow(m, sd_expert, capacity) / m);
  }
  out.rank_factor = out.busiest_rank_tokens / out.mean_tokens_per_rank;
  out.expert_factor = out.busiest_expert_tokens / out.mean_tokens_per_expert;
  return out;
}

}  // namespace parasim::cost
