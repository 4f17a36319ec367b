#pragma once
// How the CLI tests run one command in-process: the command's exit code and what it wrote to
// its out and err streams (each command takes the two streams, cli/commands.hpp).

#include <ostream>
#include <sstream>
#include <string>
#include <utility>

namespace parasim::test {

struct Run {
  int code = -1;
  std::string out, err;
};

// Calls command(out, err), which returns the exit code, with fresh string streams.
template <typename Command>
Run run_command(Command&& command) {
  std::ostringstream out, err;
  Run r;
  r.code = std::forward<Command>(command)(out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace parasim::test
