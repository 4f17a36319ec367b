#pragma once
// The problems a scenario parse reports, for the parser tests: the parse must fail with
// cost::InputError (the test fails otherwise), and a problem is found by its JSON path ("/" for
// the document) and a part of its message.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/diagnostics.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::test {

inline std::vector<cost::Problem> problems_of(std::string_view text,
                                              const std::string& file = "test.json") {
  try {
    strat::parse_scenario(text, file);
  } catch (const cost::InputError& e) {
    return e.diagnostics().problems();
  }
  FAIL("expected cost::InputError");
  return {};
}

inline bool has_problem(const std::vector<cost::Problem>& problems, std::string_view path,
                        std::string_view substring) {
  return std::any_of(problems.begin(), problems.end(), [&](const cost::Problem& p) {
    const std::string shown = p.json_path.empty() ? "/" : p.json_path;
    return shown == path && p.message.find(substring) != std::string::npos;
  });
}

}  // namespace parasim::test
