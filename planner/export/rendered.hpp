#pragma once
// parasim::exporter::Rendered — one target's configuration text before its header: the body and
// how the format writes a comment. exporter.cpp puts the header on: always for files meant to be
// read (TOML, Python), only when there are differences for argument lists (so that
// `$(cat FILE)` pastes them); never as comments on JSON: a JSON document a loader reads as plain
// JSON (DeepSpeed's config, which HF Trainer and Accelerate read with json.load) gets the header
// as a key of its own instead (`embed_key`: "_parasim", which DeepSpeed ignores), and JSON forms
// of other targets (--json) carry none: their differences go to standard error only.

#include <string>

namespace parasim::exporter {

struct Rendered {
  std::string body;
  std::string comment;         // "# ", "// ", or "" when the format has none
  bool header_always = false;  // a header even when nothing differs
  std::string embed_key;       // JSON bodies: the top-level key that carries the header
};

}  // namespace parasim::exporter
