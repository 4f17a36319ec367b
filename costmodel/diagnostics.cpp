#include "costmodel/diagnostics.hpp"

#include <fmt/format.h>

#include "costmodel/invisible_controls.hpp"

namespace parasim::cost {

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else if (const InvisibleControl control = invisible_control_at(text.substr(i));
               control.length > 0) {
      out += fmt::format("\\u{:04x}", control.code_point);
      i += control.length;
    } else if (const Utf8Step step = utf8_step(text.substr(i)); step.kind == Utf8Step::kValid) {
      out.append(text.substr(i, step.length));
      i += step.length;
    } else {  // not UTF-8 (cut off at the end, or no valid sequence): the byte escaped
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    }
  }
  return out;
}

}  // namespace parasim::cost
