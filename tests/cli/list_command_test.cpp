// Tests of `parasim list` and `parasim devices` as functions (parasim::cli::run_list,
// run_devices, with string streams): every preset and every registry entry is listed.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "cli/commands.hpp"
#include "command_run.hpp"
#include "costmodel/cluster_presets.hpp"
#include "strategies/input/model_presets.hpp"
#include "strategies/registry/registry.hpp"

namespace parasim::cli {
namespace {

using parasim::test::Run;
using parasim::test::run_command;

Run list(const std::string& what) {
  return run_command([&](std::ostream& o, std::ostream& e) { return run_list(what, o, e); });
}

TEST_CASE("list names every preset and strategy; an unknown topic is exit 2") {
  const Run presets = list("presets");
  CHECK(presets.code == kExitOk);
  CHECK(presets.err.empty());
  for (const auto& p : strat::model_presets()) {
    CHECK_MESSAGE(presets.out.find("  " + p.name + " ") != std::string::npos, p.name);
  }
  for (const auto& p : cost::cluster_presets()) {
    CHECK_MESSAGE(presets.out.find("  " + p.name + " ") != std::string::npos, p.name);
  }

  const Run strategies = list("strategies");
  CHECK(strategies.code == kExitOk);
  CHECK(strategies.err.empty());
  REQUIRE(!strat::registry_entries().empty());
  for (strat::EntryKind kind : strat::kAllEntryKinds) {
    const auto& info = strat::kind_info(kind);
    CHECK_MESSAGE(strategies.out.find(info.title + " (scenario: " + info.scenario_key + ")") !=
                      std::string::npos,
                  info.title);
    for (const auto& p : info.shared_parameters) {
      CHECK_MESSAGE(strategies.out.find(p.path + " (") != std::string::npos, p.path);
    }
  }
  for (const auto& e : strat::registry_entries()) {
    CHECK_MESSAGE(strategies.out.find("  " + e.name + " ") != std::string::npos, e.name);
    CHECK_MESSAGE(strategies.out.find(e.paper) != std::string::npos, e.name);
    for (const auto& p : e.parameters) {
      // Its path, default and legal values, on one line.
      const std::string line = p.path + " (" + p.unit + (p.unit.empty() ? "" : ", ") +
                               "default " + p.default_value + "; " + p.legal_values() + "): ";
      CHECK_MESSAGE(strategies.out.find(line) != std::string::npos, e.name << " " << line);
    }
  }
  for (const char* name : {"/parallel/dp", "/parallel/tp", "/parallel/pp", "zero_stage",
                           "/parallel/sequence_parallel", "gpipe", "1f1b", "selective", "full",
                           "adamw", "dash-gpu", "zero-3", "allgather", "megatron-lm"}) {
    CHECK_MESSAGE(strategies.out.find(name) != std::string::npos, name);
  }
  CHECK(strategies.out.find(strat::model_presets().front().name) == std::string::npos);

  const Run both = list("");
  CHECK(both.code == kExitOk);
  CHECK(both.out.find(presets.out) != std::string::npos);
  CHECK(both.out.find(strategies.out) != std::string::npos);

  const Run bogus = list("bogus");
  CHECK(bogus.code == kExitBadInput);
  CHECK(bogus.out.empty());
  CHECK(bogus.err.find("\"bogus\"") != std::string::npos);
}

TEST_CASE("devices lists GPUs (exit 0) or says in one line why there are none (exit 3)") {
  std::ostringstream out;
  const int code = run_devices(out);
  const std::string text = out.str();
  CHECK(text.rfind("CUDA plugin: ", 0) == 0);
  const auto none = text.find("No GPUs visible: ");
  if (none != std::string::npos) {
    CHECK(code == kExitNoDevice);
    const auto reason_begin = none + std::string("No GPUs visible: ").size();
    const auto reason_end = text.find('\n', reason_begin);
    CHECK_MESSAGE(reason_end > reason_begin + 3, "empty reason in:\n" << text);
  } else {
    CHECK(code == kExitOk);
    CHECK_MESSAGE(text.find("  GPU 0: ") != std::string::npos,
                  "neither GPUs nor a reason in:\n" << text);
  }
}

}  // namespace
}  // namespace parasim::cli
