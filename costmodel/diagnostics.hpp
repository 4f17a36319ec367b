#pragma once
// parasim::cost::Diagnostics — collects every problem found in one input file, so that a user
// sees all of them at once. Each problem names the file, the JSON path and what was expected.

#include <string>
#include <vector>

namespace parasim::cost {

struct Problem {
  std::string json_path;  // "/parallel/tp" (JSON Pointer syntax, RFC 6901)
  std::string message;    // what was expected and what was found
};

class Diagnostics {
 public:
  explicit Diagnostics(std::string file) : file_(std::move(file)) {}

  void add(std::string json_path, std::string message) {
    problems_.push_back({std::move(json_path), std::move(message)});
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
