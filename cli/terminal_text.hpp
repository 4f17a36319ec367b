#pragma once
// parasim::cli terminal-safe text: user strings (a scenario's name or description, labels, keys
// echoed in error messages) may hold escape sequences that a terminal would obey (colours,
// cursor moves, a window title, a rewritten line). They are shown escaped instead:
//   C0 controls other than newline and tab (ESC, CR, BEL, BS, ...) as \xNN (ESC -> \x1b);
//   C1 controls U+0080..U+009F (UTF-8 C2 80..C2 9F; U+009B is a one-byte CSI) and the
//   bidirectional formatting characters (U+202E and the others of costmodel/invisible_controls.hpp)
//   as \uXXXX; a byte that is not part of valid UTF-8 (a lone 0x9b, Latin-1 text) as \xNN.
// Everything else, other UTF-8 and DEL included, passes unchanged. JSON never holds raw C0
// controls, and \u009b or \u202e are valid JSON escapes, so JSON passing through stays valid
// JSON with the same value. A newline stays a newline here: in a name or a path it is escaped
// where that text is read (the parser refuses it in a name; diagnostics print paths printable()).
//
// main() puts every byte the commands write to std::cout and std::cerr through
// TerminalSafeBuffer: the one place that covers every command and message. terminal_safe() is
// the same rule for one string.

#include <streambuf>
#include <string>
#include <string_view>

namespace parasim::cli {

std::string terminal_safe(std::string_view text);

// A std::streambuf that forwards to `target` with the rule above; unbuffered, so output keeps
// its order with writes that reach the same file through stdio.
class TerminalSafeBuffer : public std::streambuf {
 public:
  explicit TerminalSafeBuffer(std::streambuf* target) : target_(target) {}
  // Writes out what is still pending at the end of the output (an unfinished multi-byte
  // sequence, escaped); false when the target refused it.
  bool finish();

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  bool put_raw(std::string_view bytes);
  std::streambuf* target_;
  std::string pending_;  // the start of a multi-byte sequence at the end of the previous write
};

}  // namespace parasim::cli
