// compare --recomputes: the scenario under each recompute mode of the registry.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"

using namespace parasim::cli;
using namespace parasim::test;

TEST_CASE("compare --recomputes: a row per mode, per-op refused with its reason, bad names named") {
  CompareOptions o;
  o.scenario = (kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json").string();
  o.recomputes = "none,selective,full,per-op";
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  const std::string text = out.str();
  CHECK(text.find("full") != std::string::npos);
  // The scenario's attention is unfused: torchtitan's per-op policy needs SDPA's flash kernel.
  CHECK(text.find("with SDPA's flash kernel") != std::string::npos);
  o.recomputes = "none,partial";
  std::ostringstream out2, err2;
  CHECK(run_compare(o, out2, err2) == kExitBadInput);
  CHECK(err2.str().find("unknown recompute mode \"partial\"") != std::string::npos);
}
