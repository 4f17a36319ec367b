#include "cli/option_checks.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace parasim::cli {

CLI::Validator finite_range(double min, double max) {
  const std::string description = fmt::format("a number from {:g} to {:g}", min, max);
  return CLI::Validator(
      [min, max, description](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) ||
            value < min || value > max) {
          return fmt::format("expected {}, got \"{}\"", description, text);
        }
        return {};
      },
      "NUMBER in [" + fmt::format("{:g}, {:g}", min, max) + "]");
}

CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        return text.empty() ? "expected " + what + ", got an empty text" : std::string();
      },
      "");
}

}  // namespace parasim::cli
