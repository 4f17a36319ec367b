#pragma once
// parasim::cli option checks — CLI11 validators for the values no built-in check refuses:
// CLI::Range and CLI::PositiveNumber let "nan" and "inf" through (every comparison with nan is
// false), which would switch a limit off (`--max-candidates nan`), and an empty text would pick
// a default silently (`export --version ""`). A refused value is exit 2 naming the option.

#include <CLI/CLI.hpp>

#include <string>

namespace parasim::cli {

// A finite number in [min, max] ("nan", "inf", "1e400" and text refused).
CLI::Validator finite_range(double min, double max);

// Text with at least one character; `what` says what is expected ("a version, e.g. 0.3").
CLI::Validator non_empty(const std::string& what);

}  // namespace parasim::cli
