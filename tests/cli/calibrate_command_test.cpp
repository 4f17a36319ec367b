// `parasim calibrate` command-line errors: exit code 2 with a message saying what to fix, before
// anything is measured. (The measuring paths run end to end under mpirun in
// tests/calibrate/cpu_backend_e2e.sh: MPI can be initialised once per process.)
#include <doctest/doctest.h>

#include <sstream>

#include "cli/commands.hpp"

using namespace parasim::cli;

namespace {

struct Outcome {
  int code;
  std::string err;
};

Outcome run(CalibrateOptions o) {
  std::ostringstream out, err;
  const int code = run_calibrate(o, out, err);
  return {code, err.str()};
}

}  // namespace

TEST_CASE("calibrate: bad command lines exit 2 naming the problem") {
  CalibrateOptions o;
  o.backend = "cpu";
  {
    const Outcome r = run(o);  // neither --out nor --check
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("exactly one of --out FILE") != std::string::npos);
  }
  o.out = "p.json";
  o.min_bytes = "12X";
  {
    const Outcome r = run(o);
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("-b '12X': expected a positive size in bytes") != std::string::npos);
  }
  o.min_bytes = "64K";
  o.max_bytes = "1K";
  {
    const Outcome r = run(o);
    CHECK(r.code == kExitBadInput);
  }
  o.max_bytes.clear();
  o.ops = "gemm,solver";
  {
    const Outcome r = run(o);
    CHECK(r.code == kExitBadInput);
    CHECK(r.err.find("unknown measurement 'solver'") != std::string::npos);
  }
}
