#pragma once
// parasim::cost::Diagnostics — collects every problem found in one input file, so that a user
// sees all of them at once. Each problem names the file, the JSON path and what was expected.

#include <string>
#include <string_view>
#include <vector>

namespace parasim::cost {

struct Problem {
  std::string json_path;  // "/parallel/tp" (JSON Pointer syntax, RFC 6901)
  std::string message;    // what was expected and what was found
};

// `text` with ASCII control characters (below 0x20, and 0x7F) as \xHH and the invisible
// controls of invisible_controls.hpp (C1 controls, bidirectional formatting characters such as
// U+202E) as \uXXXX; everything else unchanged. Applied twice it changes nothing more.
std::string printable(std::string_view text);

class Diagnostics {
 public:
  // The file name is kept printable() too: a path may hold a newline or U+202E.
  explicit Diagnostics(std::string file) : file_(printable(file)) {}

  // Control characters in the path or the message (an unknown key's bytes, quoted input) are
  // written as \xHH (C1 controls in UTF-8 as \u00HH), so that a problem stays one line and
  // nothing from the file reaches a terminal as an escape sequence.
  void add(std::string json_path, std::string message) {
    problems_.push_back({printable(json_path), printable(message)});
  }
  bool ok() const { return problems_.empty(); }
  const std::vector<Problem>& problems() const { return problems_; }
  const std::string& file() const { return file_; }

  // "FILE: /json/path: message" one per line, in the order found.
  std::string to_string() const {
    std::string out;
    for (const auto& p : problems_) {
      out += file_ + ": " + (p.json_path.empty() ? "/" : p.json_path) + ": " + p.message + "\n";
    }
    return out;
  }

 private:
  std::string file_;
  std::vector<Problem> problems_;
};

// Thrown (and caught only in main) when an input file has problems; carries all of them.
class InputError : public std::exception {
 public:
  explicit InputError(Diagnostics d) : diagnostics_(std::move(d)), text_(diagnostics_.to_string()) {}
  const char* what() const noexcept override { return text_.c_str(); }
  const Diagnostics& diagnostics() const { return diagnostics_; }

 private:
  Diagnostics diagnostics_;
  std::string text_;
};

}  // namespace parasim::cost
