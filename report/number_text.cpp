#include "report/number_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace parasim::cli {

std::string grouped_integer(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string digits = fmt::format("{:.0f}", std::abs(v));
  std::string out;
  const std::size_t n = digits.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0 && (n - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 && out != "0" ? "-" : "") + out;
}

std::string readable_count(double v) {
  if (!std::isfinite(v) || std::abs(v) >= 99.995) return grouped_integer(v);
  if (v == 0) return "0";
  // Four significant digits: decimals = 3 - floor(log10 |v|) of v rounded to four significant
  // digits (9.9996 is "10.00", not "10.000"), at most 12 (below that, "0").
  const double rounded = std::stod(fmt::format("{:.3e}", std::abs(v)));
  const int magnitude = static_cast<int>(std::floor(std::log10(rounded)));
  const int decimals = std::clamp(3 - magnitude, 0, 12);
  return fmt::format("{:.{}f}", v, decimals);
}

std::string count_of(long long n, std::string_view singular, std::string_view plural) {
  if (n == 1) return fmt::format("1 {}", singular);
  if (plural.empty()) return fmt::format("{} {}s", n, singular);
  return fmt::format("{} {}", n, plural);
}

}  // namespace parasim::cli
