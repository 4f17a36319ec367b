#pragma once
// parasim::exporter::Rendered — one target's configuration text before its header: the body and
// how the format writes a comment. exporter.cpp puts the header on: always for files meant to be
// read (TOML, Python), only when there are differences for argument lists (so that
// `$(cat FILE)` pastes them) and for DeepSpeed's JSON (its loader reads hjson, which has `//`
// comments); never on JSON documents (--json), which have no comments: their differences go to
// standard error only.

#include <string>

namespace parasim::exporter {

struct Rendered {
  std::string body;
  std::string comment;         // "# ", "// ", or "" when the format has none
  bool header_always = false;  // a header even when nothing differs
};

}  // namespace parasim::exporter
