#pragma once
// parasim::cli compare run — a scenario's variants along one axis (compare_variants.hpp),
// simulated one by one: what `parasim compare` prints and writes and what the Python API's
// compare() returns (python/), computed here once so that both give the same bytes.

#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "costmodel/profile.hpp"
#include "report/compare/compare_row.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::cli {

struct CompareRun {
  std::vector<CompareRow> rows;       // in the order of the axis' list
  std::string note;                   // a default taken, said above the table (or "")
  std::vector<std::string> warnings;  // the cost model's
};

// The variants of `options` on `base` (a validated scenario; options.scenario names it in
// messages), each simulated with `profile` (nullptr: the analytical model; the caller has checked
// it fits). Throws cost::InputError when the axis list is wrong or no variant applies (every
// variant's reasons), and what run_simulation throws.
CompareRun run_comparison(const strat::Scenario& base, const CompareOptions& options,
                          const cost::Profile* profile, bool record_memory_timeline);

// The rows JSON as `compare --json` writes it (indented by 2, one newline at the end): each row's
// identity, then its result JSON's fields, or why it does not apply.
std::string compare_json_text(const strat::Scenario& base, const std::vector<CompareRow>& rows);

// The heading line, the note and the table, as `compare` prints them.
std::string compare_text(const strat::Scenario& base, const CompareRun& run);

}  // namespace parasim::cli
