#include "report/compare/compare_variant.hpp"

#include <fmt/format.h>

namespace parasim::cli {

std::string not_applicable_text(const CompareVariant& v) {
  std::string text;
  for (const auto& p : v.not_applicable) {
    text += fmt::format("{}{} ({})", text.empty() ? "" : "; ", p.message,
                        p.json_path.empty() ? "/" : p.json_path);
  }
  return text;
}

}  // namespace parasim::cli
