#include "costmodel/invisible_controls.hpp"

namespace parasim::cost {
namespace {

unsigned char byte(std::string_view text, std::size_t i) {
  return static_cast<unsigned char>(text[i]);
}

}  // namespace

InvisibleControl invisible_control_at(std::string_view text) {
  if (text.size() >= 2) {
    const unsigned char a = byte(text, 0), b = byte(text, 1);
    if (a == 0xc2 && b >= 0x80 && b <= 0x9f) return {b, 2};       // U+0080..U+009F
    if (a == 0xd8 && b == 0x9c) return {0x061c, 2};               // ALM
  }
  if (text.size() >= 3 && byte(text, 0) == 0xe2) {
    const unsigned char b = byte(text, 1), c = byte(text, 2);
    const std::uint32_t code = 0x2000u + ((b & 0x3fu) << 6) + (c & 0x3fu);
    const bool continuation = c >= 0x80 && c <= 0xbf;
    if (continuation && b == 0x80 && (c == 0x8e || c == 0x8f || (c >= 0xaa && c <= 0xae))) {
      return {code, 3};  // LRM, RLM, LRE..RLO
    }
    if (continuation && b == 0x81 && c >= 0xa6 && c <= 0xa9) return {code, 3};  // LRI..PDI
  }
  return {};
}

bool starts_invisible_control(std::string_view text) {
  if (text.size() == 1) {
    const unsigned char a = byte(text, 0);
    return a == 0xc2 || a == 0xd8 || a == 0xe2;
  }
  if (text.size() == 2) {
    return byte(text, 0) == 0xe2 && (byte(text, 1) == 0x80 || byte(text, 1) == 0x81);
  }
  return false;
}

Utf8Step utf8_step(std::string_view text) {
  if (text.empty()) return {Utf8Step::kIncomplete, 0};
  const unsigned char a = byte(text, 0);
  if (a < 0x80) return {Utf8Step::kValid, 1};
  // The sequence length and the range of the second byte (RFC 3629, section 4).
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xbf;
  if (a >= 0xc2 && a <= 0xdf) {
    n = 2;
  } else if (a >= 0xe0 && a <= 0xef) {
    n = 3;
    if (a == 0xe0) low = 0xa0;
    if (a == 0xed) high = 0x9f;
  } else if (a >= 0xf0 && a <= 0xf4) {
    n = 4;
    if (a == 0xf0) low = 0x90;
    if (a == 0xf4) high = 0x8f;
  } else {
    return {Utf8Step::kInvalid, 1};
  }
  for (std::size_t i = 1; i < n; ++i) {
    if (i == text.size()) return {Utf8Step::kIncomplete, i};
    const unsigned char c = byte(text, i);
    if (c < (i == 1 ? low : 0x80) || c > (i == 1 ? high : 0xbf)) return {Utf8Step::kInvalid, 1};
  }
  return {Utf8Step::kValid, n};
}

}  // namespace parasim::cost
