#pragma once
// parasim validate-against — parasim's step times against measured training runs
// (docs/validation.md). The logic is in report/validation/; this is the command around it.
//
// Exit codes: 0 done (and the guard, if given, passed); 2 bad input (a validation file, the
// profile, the guard or the command line; every problem reported, nothing written); 1 the
// guard failed (the error grew past the recorded value) or a case failed inside parasim.

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace parasim::cli {

struct ValidateAgainstOptions {
  std::string path;     // a validation file or a folder of them
  std::string json;     // empty: none; "-": standard output (the summary then goes to stderr)
  std::string csv;      // the same
  std::string profile;  // empty: the analytical model with each scenario's hardware
  bool allow_foreign_profile = false;  // --allow-foreign-profile
  int threads = 1;
  std::string filter;     // only cases whose id, family or file name contains it
  int worst = 10;         // worst cases listed
  std::string guard;      // guard.json to check the result against
  bool progress = false;  // a progress line on standard error (main: only on a terminal)
};

// Registers the subcommand and its options on `app`, filling `options` when it is parsed
// (threads default to the cores; progress is on when standard error is a terminal).
CLI::App* add_validate_against_command(CLI::App& app, ValidateAgainstOptions& options);

int run_validate_against(const ValidateAgainstOptions& options, std::ostream& out,
                         std::ostream& err);

}  // namespace parasim::cli
