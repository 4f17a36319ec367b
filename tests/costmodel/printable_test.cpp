// cost::printable (diagnostics.hpp): what a problem message or a file name may hold is one line
// of visible text: C0 controls as \xHH, C1 and bidirectional formatting characters as \uXXXX.
#include <doctest/doctest.h>

#include "costmodel/diagnostics.hpp"

namespace parasim::cost {

TEST_CASE("printable escapes newlines, C1 controls and U+202E; applied twice it changes nothing") {
  const std::string raw = "odd\nname\xe2\x80\xae.json \xc2\x9b caf\xc3\xa9";
  const std::string shown = printable(raw);
  CHECK(shown == "odd\\x0aname\\u202e.json \\u009b caf\xc3\xa9");
  CHECK(printable(shown) == shown);
  Diagnostics d(raw);
  d.add("/name", "x\ny");
  CHECK(d.to_string() == shown + ": /name: x\\x0ay\n");
}

TEST_CASE("printable escapes bytes that are not UTF-8: a lone 0x9b, Latin-1, a cut sequence") {
  CHECK(printable("/tmp/\x9b"
                  "31mX.json") == "/tmp/\\x9b31mX.json");
  CHECK(printable("caf\xe9") == "caf\\xe9");
  CHECK(printable("cut \xe2\x86") == "cut \\xe2\\x86");
  CHECK(printable("\xf0\x9f\x98\x80 ok") == "\xf0\x9f\x98\x80 ok");  // U+1F600 stays
}

}  // namespace parasim::cost
