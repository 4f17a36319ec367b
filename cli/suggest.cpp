#include "cli/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace parasim::cli {
namespace {

std::string folded(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

std::size_t edit_distance(std::string_view a_text, std::string_view b_text) {
  const std::string a = folded(a_text), b = folded(b_text);
  // d[i][j]: distance between the first i letters of a and the first j of b.
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + substitution});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string> nearest_name(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  const std::string w = folded(word);
  if (w.empty()) return std::nullopt;
  std::vector<std::string> prefixed;
  for (const auto& c : candidates) {
    if (folded(c).rfind(w, 0) == 0) prefixed.push_back(c);
  }
  if (prefixed.size() == 1) return prefixed.front();
  const std::size_t limit = w.size() <= 4 ? 1 : 2;
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  bool tie = false;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(w, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
      tie = false;
    } else if (d == best_distance) {
      tie = true;
    }
  }
  if (tie || best_distance > limit) return std::nullopt;
  return best;
}

}  // namespace parasim::cli
