#pragma once
// `parasim plan` run in-process for the planner's tests: the exit code and what it wrote.
#include <sstream>
#include <string>
#include <vector>

#include "cli/plan_command.hpp"

namespace parasim::test {

struct PlanRun {
  int code = -1;
  std::string out, err;
};

// run_plan_command with two threads and no progress line.
inline PlanRun run_plan(cli::PlanCommandOptions o) {
  o.progress = false;
  o.threads = 2;
  std::ostringstream a, b;
  PlanRun r;
  r.code = cli::run_plan_command(o, a, b);
  r.out = a.str();
  r.err = b.str();
  return r;
}

}  // namespace parasim::test
