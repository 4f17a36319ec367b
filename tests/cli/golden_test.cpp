// Golden results: every shipped scenario is simulated again and compared with
// tests/data/golden.json (step time to a relative 1e-9; peak memory per device, op count and
// event count exactly). A difference means the simulator's output moved: either a bug, or an
// intended model change, after which the file is regenerated on purpose (see kRebaseline).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using namespace parasim::test;
const fs::path kGolden = kSourceDir / "tests" / "data" / "golden.json";

const std::string kRebaseline =
    "If this change is meant to move the simulator's results, re-baseline on purpose: run "
    "`tests/update_golden.sh BUILD_DIR` from the repository root, review `git diff "
    "tests/data/golden.json`, and give the reason in the commit message (tests/data/README.md). "
    "Otherwise this is a regression.";

// Full precision, so that a change in the last digits shows.
std::string exact(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}


json golden() {
  try {
    return json::parse(read_text(kGolden));
  } catch (const json::parse_error& e) {
    FAIL(kGolden.string() << " is not valid JSON: " << e.what() << "\n" << kRebaseline);
  }
  return {};
}

std::set<std::string> scenario_names() {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "scenarios")) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      names.insert(entry.path().stem().string());
    }
  }
  return names;
}

// Simulates a shipped scenario with --json into a temporary file and returns the result.
json simulate(const std::string& name) {
  std::random_device rd;
  const fs::path dir =
      fs::temp_directory_path() / ("parasim-golden-test-" + std::to_string(rd()) + "-" + name);
  fs::create_directories(dir);
  SimulateOptions o;
  o.scenario = (kSourceDir / "scenarios" / (name + ".json")).string();
  o.json = (dir / "result.json").string();
  std::ostringstream out, err;
  const int code = run_simulate(o, out, err);
  json result;
  if (code == kExitOk) result = json::parse(read_text(o.json));
  std::error_code ec;
  fs::remove_all(dir, ec);
  REQUIRE_MESSAGE(code == kExitOk, "parasim simulate " << o.scenario << " failed:\n" << err.str());
  return result;
}

}  // namespace

TEST_CASE("golden.json has an entry for every scenario in scenarios/ and no other") {
  const json g = golden();
  REQUIRE(g.at("parasim_golden") == 1);
  REQUIRE(g.at("scenarios").is_object());
  std::set<std::string> in_golden;
  for (const auto& [name, entry] : g.at("scenarios").items()) in_golden.insert(name);
  const auto shipped = scenario_names();
  REQUIRE(!shipped.empty());
  for (const auto& name : shipped) {
    CHECK_MESSAGE(in_golden.count(name) == 1,
                  "scenarios/" << name << ".json has no golden entry. " << kRebaseline);
  }
  for (const auto& name : in_golden) {
    CHECK_MESSAGE(shipped.count(name) == 1, "golden.json has an entry for " << name
                                                << ", but scenarios/" << name
                                                << ".json does not exist. " << kRebaseline);
  }
}

TEST_CASE("every shipped scenario reproduces its golden step time, peak memory, ops and events") {
  const json g = golden();
  for (const auto& name : scenario_names()) {
    CAPTURE(name);
    if (!g.at("scenarios").contains(name)) continue;  // reported by the test above
    const json& want = g.at("scenarios").at(name);
    const json got = simulate(name);

    const double want_step = want.at("step_time_s").get<double>();
    const double got_step = got.at("step_time_s").get<double>();
    CHECK_MESSAGE(std::abs(got_step - want_step) <= 1e-9 * std::abs(want_step),
                  name << ": step_time_s is " << exact(got_step) << ", golden " << exact(want_step)
                       << " (relative difference " << (got_step - want_step) / want_step
                       << "). " << kRebaseline);

    const auto& want_peak = want.at("peak_memory_bytes");
    const auto& got_peak = got.at("peak_memory_bytes");
    CHECK_MESSAGE(got_peak.size() == want_peak.size(),
                  name << ": " << got_peak.size() << " simulated devices, golden "
                       << want_peak.size() << ". " << kRebaseline);
    for (std::size_t d = 0; d < std::min(got_peak.size(), want_peak.size()); ++d) {
      // Byte counts are whole numbers far below 2^53, so the doubles compare exactly.
      const double want_bytes = want_peak[d].get<double>();
      const double got_bytes = got_peak[d].get<double>();
      CHECK_MESSAGE(got_bytes == want_bytes,
                    name << ": peak_memory_bytes[" << d << "] is " << static_cast<long long>(got_bytes)
                         << ", golden " << static_cast<long long>(want_bytes) << ". "
                         << kRebaseline);
    }

    for (const char* key : {"ops", "events"}) {
      const auto want_n = want.at(key).get<std::uint64_t>();
      const auto got_n = got.at(key).get<std::uint64_t>();
      CHECK_MESSAGE(got_n == want_n, name << ": " << std::string(key) << " is " << got_n << ", golden "
                                          << want_n << ". " << kRebaseline);
    }
  }
}

}  // namespace parasim::cli
