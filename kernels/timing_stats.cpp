#include "kernels/timing_stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace parasim::kernels {
namespace {

// Type-7 quantile of sorted values: linear interpolation at position q * (n - 1).
double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

}  // namespace

TimingStats summarize(std::vector<double> samples_s) {
  if (samples_s.empty()) throw std::invalid_argument("summarize: no timing samples");
  for (double s : samples_s) {
    if (!std::isfinite(s) || s < 0) {
      throw std::invalid_argument("summarize: a timing sample is negative or not finite");
    }
  }
  std::sort(samples_s.begin(), samples_s.end());
  return TimingStats{quantile(samples_s, 0.5), quantile(samples_s, 0.2), quantile(samples_s, 0.8),
                     static_cast<int>(samples_s.size())};
}

}  // namespace parasim::kernels
