// Terminal-safe text (cli/terminal_text.hpp): control characters in user strings are shown
// escaped, everything else unchanged, and JSON stays valid JSON with the same value.
#include "cli/terminal_text.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

using parasim::cli::terminal_safe;
using parasim::cli::TerminalSafeBuffer;

TEST_CASE("terminal_safe escapes C0 and C1 controls and keeps the rest") {
  CHECK(terminal_safe("plain name, 7B") == "plain name, 7B");
  CHECK(terminal_safe("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m");
  CHECK(terminal_safe("a\rb\x07" "c\bd") == "a\\x0db\\x07c\\x08d");
  CHECK(terminal_safe("lines\nand\ttabs") == "lines\nand\ttabs");
  CHECK(terminal_safe("\xc2\x9b" "2J") == "\\u009b2J");  // the one-byte CSI, UTF-8 encoded
  CHECK(terminal_safe("\xc2\x85") == "\\u0085");
  // Other UTF-8 (U+00A0 and up, here "é", "µ", "→") and DEL pass unchanged.
  CHECK(terminal_safe("caf\xc3\xa9 1 \xc2\xb5s \xe2\x86\x92 \x7f") ==
        "caf\xc3\xa9 1 \xc2\xb5s \xe2\x86\x92 \x7f");
  // A lead byte that never completes, a lone C1 byte (0x9b: CSI to some terminals) and Latin-1
  // text are not UTF-8: each byte escaped.
  CHECK(terminal_safe("ends with a lead byte \xc2") == "ends with a lead byte \\xc2");
  CHECK(terminal_safe("/tmp/\x9b"
                      "31mX.json") == "/tmp/\\x9b31mX.json");
  CHECK(terminal_safe("caf\xe9") == "caf\\xe9");
  CHECK(terminal_safe("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a surrogate: not UTF-8
}

TEST_CASE("a control split over two insertions of a unit-buffered stream is still escaped") {
  std::ostringstream target;
  TerminalSafeBuffer buffer(target.rdbuf());
  std::ostream err(&buffer);
  err << std::unitbuf;  // as std::cerr: a sync after every insertion
  err << "x\xe2\x80";
  err << "\xae"
         "y";
  err << "\xc3";
  err << "\xa9";
  CHECK(target.str() == "x\\u202ey\xc3\xa9");
  err << "\xe2";
  buffer.finish();  // the end of the output: what never completed is escaped
  CHECK(target.str() == "x\\u202ey\xc3\xa9\\xe2");
}

TEST_CASE("TerminalSafeBuffer filters a stream, a C2 lead byte split across writes included") {
  std::ostringstream target;
  TerminalSafeBuffer buffer(target.rdbuf());
  std::ostream out(&buffer);
  out << "name: " << "\x1b]0;title\x07" << '\n';
  out << "split \xc2";
  out << "\x9b" "2J" << '\n';
  out.put('\x1b');
  out << "\n";
  CHECK(target.str() == "name: \\x1b]0;title\\x07\nsplit \\u009b2J\n\\x1b\n");
}

TEST_CASE("JSON through TerminalSafeBuffer stays valid JSON with the same value") {
  nlohmann::json j;
  j["name"] = "\x1b[31mred\r\xc2\x9b" "2J caf\xc3\xa9";
  std::ostringstream target;
  TerminalSafeBuffer buffer(target.rdbuf());
  std::ostream out(&buffer);
  out << j.dump(2) << "\n";
  CHECK(target.str().find('\x1b') == std::string::npos);
  CHECK(target.str().find("\xc2\x9b") == std::string::npos);
  CHECK(nlohmann::json::parse(target.str()) == j);
}

TEST_CASE("bidirectional formatting characters are escaped, split across writes included") {
  // U+202E RLO, U+2066 LRI, U+200F RLM, U+061C ALM; U+2010 (a hyphen, E2 80 90) stays.
  CHECK(terminal_safe("a\xe2\x80\xae" "b\xe2\x81\xa6" "c\xe2\x80\x8f" "d\xd8\x9c" "e") ==
        "a\\u202eb\\u2066c\\u200fd\\u061ce");
  CHECK(terminal_safe("x\xe2\x80\x90y") == "x\xe2\x80\x90y");
  CHECK(terminal_safe("ends \xe2\x80") == "ends \\xe2\\x80");
  std::ostringstream target;
  TerminalSafeBuffer buffer(target.rdbuf());
  std::ostream out(&buffer);
  out << "a\xe2";
  out << "\x80";
  out << "\xae" "b \xe2";
  out << "\x86\x92" << '\n';  // U+2192 (an arrow) is not a control: written as it came
  CHECK(target.str() == "a\\u202eb \xe2\x86\x92\n");
}
