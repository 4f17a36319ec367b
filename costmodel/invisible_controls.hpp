#pragma once
// parasim::cost invisible controls — the characters that change how a terminal shows text
// without being seen themselves, so that text from a file or a command line (a scenario's name,
// an input path, a key) could fake or reorder what parasim prints:
//   the C1 controls U+0080..U+009F (UTF-8 C2 80..C2 9F; U+009B is a one-byte CSI), and
//   the bidirectional formatting characters (Unicode UAX #9): U+061C ALM, U+200E LRM,
//   U+200F RLM, U+202A..U+202E (LRE, RLE, PDF, LRO, RLO) and U+2066..U+2069 (LRI, RLI, FSI,
//   PDI), the "Trojan Source" characters (CVE-2021-42574).
// The C0 controls are single bytes and are handled by each caller's own rule. printable()
// (diagnostics.hpp) and the terminal filter (cli/terminal_text.hpp) both write these as \uXXXX,
// and a byte that is not part of valid UTF-8 (a lone 0x9b, a one-byte CSI to some terminals;
// Latin-1 text) as \xNN (utf8_step).

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace parasim::cost {

// The code point of the invisible control whose UTF-8 encoding starts `text`, with its length
// in bytes; 0 when `text` does not start with one.
struct InvisibleControl {
  std::uint32_t code_point = 0;
  std::size_t length = 0;
};
InvisibleControl invisible_control_at(std::string_view text);

// Whether `text` (shorter than any encoding above) is the start of one: a writer that sees it
// at the end of a chunk waits for the next bytes before deciding.
bool starts_invisible_control(std::string_view text);

// The UTF-8 sequence `text` starts with (RFC 3629: no overlong forms, no surrogates, at most
// U+10FFFF): valid with its length in bytes (1 for ASCII); incomplete, a valid start cut off by
// the end of `text` (a writer waits for the next bytes); invalid, its first byte belongs to no
// valid sequence here (show it escaped). An empty `text` is incomplete.
struct Utf8Step {
  enum Kind : std::uint8_t { kValid, kIncomplete, kInvalid } kind = kInvalid;
  std::size_t length = 0;
};
Utf8Step utf8_step(std::string_view text);

}  // namespace parasim::cost
