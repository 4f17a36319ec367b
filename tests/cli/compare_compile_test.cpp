// compare --compiles: the scenario with torch.compile off and on (docs/pytorch-native.md).
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"

using namespace parasim::cli;
using namespace parasim::test;

TEST_CASE(
    "compare --compiles: off and on for torchtitan, refused on Megatron's layer, bad values") {
  CompareOptions o;
  o.scenario = (kSourceDir / "scenarios" / "llama3-8b-fsdp2-8gpu.json").string();
  o.compiles = "off,on";
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_compare(o, out, err) == kExitOk, err.str());
  const std::string text = out.str();
  CHECK(text.find("compile off") != std::string::npos);
  CHECK(text.find("compile on") != std::string::npos);
  // Megatron-LM's layer has no compiled form: the row says why.
  o.scenario = (kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json").string();
  std::ostringstream out2, err2;
  REQUIRE_MESSAGE(run_compare(o, out2, err2) == kExitOk, err2.str());
  CHECK(out2.str().find("torchtitan's block") != std::string::npos);
  o.compiles = "off,fast";
  std::ostringstream out3, err3;
  CHECK(run_compare(o, out3, err3) == kExitBadInput);
  CHECK(err3.str().find("--compiles: unknown value \"fast\"") != std::string::npos);
}
