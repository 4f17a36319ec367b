// compare --schedules from an interleaved scenario with a micro-batch group (Llama 3's
// interleaving, parallel.microbatch_group): the other schedules drop the group, which is
// interleaved-1f1b's own, and run.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"

using namespace parasim::cli;
using namespace parasim::test;

TEST_CASE("compare: 1f1b beside interleaved-1f1b in groups of N runs, N dropped for it") {
  TempDir tmp;
  write_text(tmp.path() / "grouped.json", R"({
    "name": "grouped", "model": {"preset": "llama2-7b", "layers": 8},
    "cluster": {"preset": "dgx-h100", "nodes": 1},
    "training": {"global_batch": 12, "micro_batch": 1},
    "parallel": {"pp": 4, "tp": 2, "schedule": "interleaved-1f1b", "chunks": 2,
                 "microbatch_group": 6}})");
  CompareOptions o;
  o.scenario = (tmp.path() / "grouped.json").string();
  o.schedules = "1f1b,interleaved-1f1b";
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  const std::string text = out.str();
  CHECK(text.find("not applicable") == std::string::npos);
  CHECK(text.find("1f1b ") != std::string::npos);
  CHECK(text.find("interleaved-1f1b") != std::string::npos);
}
