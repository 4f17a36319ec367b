#include "cli/option_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "report/number_text.hpp"

namespace parasim::cli {

std::vector<std::string> split_list(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::optional<long long> parse_whole_number(std::string_view text, long long min, long long max) {
  const bool digits_only =
      !text.empty() &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits_only || (text.size() > 1 && text.front() == '0')) return std::nullopt;
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

std::string whole_number_message(std::string_view option, std::string_view item, long long min,
                                 long long max, std::string_view what) {
  return fmt::format("{}: \"{}\" is not a whole number from {} to {} ({})", option, item,
                     grouped_integer(static_cast<double>(min)),
                     grouped_integer(static_cast<double>(max)), what);
}

}  // namespace parasim::cli
