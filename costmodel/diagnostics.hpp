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

// `text` with ASCII control characters (below 0x20, and 0x7F) as \xHH and the UTF-8 encoding
// of the C1 controls (U+0080 to U+009F) as \u00HH; everything else unchanged.
inline std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      const auto d = static_cast<unsigned char>(text[++i]);
      out += "\\u00";
      out += kHex[d >> 4];
      out += kHex[d & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}

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
