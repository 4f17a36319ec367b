#pragma once
// parasim fuzz harness helpers (tests/fuzz, libFuzzer): what every harness checks of a parser.
//
// A parser given any bytes either returns a value or throws cost::InputError whose diagnostics
// name the file and hold at least one problem, each printed as "FILE: /json/path: message"
// (docs/scenario.md, "Errors"). Any other exception escapes the harness: libFuzzer reports it as
// a crash (uncaught exception, std::terminate), as it does ASan and UBSan findings.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "costmodel/diagnostics.hpp"

namespace parasim::fuzz {

// The file name the harnesses pass to the parsers (only used in messages).
inline constexpr const char* kFuzzFileName = "fuzz-input.json";

// Aborts, so that libFuzzer saves the input, when `condition` is false.
inline void require(bool condition, const char* what, const std::string& detail = {}) {
  if (condition) return;
  std::fprintf(stderr, "parasim fuzz check failed: %s\n%s\n", what, detail.c_str());
  std::abort();
}

inline bool known_crash_allowed(std::string_view name);

// Whether `line` (without its '\n') holds a control character: a raw newline, carriage return
// or terminal escape taken from the input would break "one problem per line" or the terminal.
inline bool has_control_character(std::string_view line) {
  for (const char c : line) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  return false;
}

// The contract of an InputError (see above).
inline void check_input_error(const cost::InputError& e) {
  const auto& d = e.diagnostics();
  require(d.file() == kFuzzFileName, "InputError names another file", d.file());
  require(!d.problems().empty(), "InputError without a problem", e.what());
  const std::string prefix = std::string(kFuzzFileName) + ": /";
  const std::string text = e.what();
  bool control = false;
  for (const auto& p : d.problems()) {
    control = control || has_control_character(p.json_path) || has_control_character(p.message);
  }
  if (control && known_crash_allowed("control-characters-in-messages")) return;
  std::size_t lines = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    require(end != std::string::npos, "InputError text does not end in a newline", text);
    const std::string_view line(text.data() + start, end - start);
    require(line.substr(0, prefix.size()) == prefix,
            "an InputError line is not \"FILE: /json/path: message\"", text);
    require(!has_control_character(line), "an InputError line holds a control character", text);
    ++lines;
    start = end + 1;
  }
  require(lines == d.problems().size(), "InputError: not one line per problem", text);
}

// Known, reported crashes that a run may step over while they are open, so that fuzzing goes on
// past them (tests/fuzz/crashes/README.md lists each with its input). PARASIM_FUZZ_KNOWN holds a
// comma-separated list of their names; unset, nothing is stepped over. Names:
//   json-number-overflow            nlohmann::json::out_of_range 406 ("number overflow
//                                   parsing '9e308'") escaping the parser, not an InputError.
//   control-characters-in-messages  a key or value's newline or escape character copied raw
//                                   into a problem's path or message.
inline bool known_crash_allowed(std::string_view name) {
  static const std::string known = [] {
    const char* value = std::getenv("PARASIM_FUZZ_KNOWN");
    return "," + std::string(value ? value : "") + ",";
  }();
  return known.find("," + std::string(name) + ",") != std::string::npos;
}

// Whether the exception `e` (not an InputError) is a known crash that PARASIM_FUZZ_KNOWN allows;
// the harnesses rethrow every other one, which libFuzzer reports as a crash.
inline bool is_known_crash(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const nlohmann::json::out_of_range& oor) {
    return oor.id == 406 && known_crash_allowed("json-number-overflow");
  } catch (...) {
    return false;
  }
}

}  // namespace parasim::fuzz
