// `parasim calibrate` command-line errors: exit code 2 with a message saying what to fix, before
// anything is measured. (The measuring paths run end to end under mpirun in
// tests/calibrate/cpu_backend_e2e.sh: MPI can be initialised once per process.)
#include <doctest/doctest.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "cli/calibrate_summary.hpp"
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

TEST_CASE("calibrate's summary: each fit in us and GB/s, an unresolved bandwidth warned of") {
  parasim::cost::MeasuredTables t;
  parasim::cost::CollectiveSeries resolved;
  resolved.kind = parasim::cost::CollectiveKind::kAllGather;
  resolved.group = {2, 2, 1};
  resolved.points.push_back({parasim::cost::Bytes{4096}, false, {}, true});
  resolved.fit = parasim::cost::AlphaBeta{2e-6, 1e-10};  // 10 GB/s
  parasim::cost::CollectiveSeries flat = resolved;
  flat.kind = parasim::cost::CollectiveKind::kSendRecv;
  flat.fit = parasim::cost::AlphaBeta{66e-6, 0};  // what a rank descheduled on busy cores gave
  t.collectives = {resolved, flat};
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  print_calibrate_summary(f, t, "p.json");
  std::rewind(f);
  std::string text;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) text.push_back(static_cast<char>(c));
  std::fclose(f);
  CHECK(text.find("all-gather      2 ranks (2 per node): alpha 2.00 us, 1/beta 10.000 GB/s") !=
        std::string::npos);
  CHECK(text.find("send-recv       2 ranks (2 per node): alpha 66.00 us, 1/beta unresolved") !=
        std::string::npos);
  CHECK(text.find("warning: send-recv on 2 ranks: the measured times do not grow") !=
        std::string::npos);
  CHECK(text.find("warning: all-gather") == std::string::npos);
}
