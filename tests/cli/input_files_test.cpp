// Bad input files through the commands that read them: every malformed profile of
// tests/data/bad-profile is reported by `simulate --profile`, `compare --profile` and
// `calibrate --check` with exit code 2, naming the profile (not the scenario) and the JSON path,
// and nothing is written; JSON numbers beyond a double are bad input, not a crash.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;
using namespace parasim::test;

const fs::path kScenario = kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json";

struct Run {
  int code = -1;
  std::string out;
  std::string err;
};

template <typename F>
Run run(F&& f) {
  Run r;
  std::ostringstream out, err;
  r.code = f(out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// Every line of `err` starts with "FILE: /" (one problem per line, in the file named).
void check_every_line_names(const std::string& err, const std::string& file) {
  std::istringstream lines(err);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    CHECK_MESSAGE(line.rfind(file + ": /", 0) == 0, "line does not name " << file << ": " << line);
    ++count;
  }
  CHECK(count > 0);
}

}  // namespace

TEST_CASE("every bad profile: simulate, compare and calibrate --check exit 2 naming the profile") {
  const fs::path dir = kSourceDir / "tests" / "data" / "bad-profile";
  const auto expected = expected_problems(dir);
  for (const auto& file : json_files_in(dir)) {
    const std::string profile = file.string();
    CAPTURE(profile);
    const auto& problems = expected.at(file.filename().string());
    TempDir tmp;

    SimulateOptions s;
    s.scenario = kScenario.string();
    s.profile = profile;
    s.json = tmp.file("result.json");
    const Run sim = run([&](std::ostream& o, std::ostream& e) { return run_simulate(s, o, e); });
    CHECK(sim.code == kExitBadInput);
    CHECK(sim.out.empty());
    check_every_line_names(sim.err, profile);
    for (const auto& [path, text] : problems) {
      CHECK_MESSAGE(sim.err.find(profile + ": " + path + ": ") != std::string::npos,
                    "no problem at " << path << " in:\n" << sim.err);
    }

    CompareOptions c;
    c.scenario = kScenario.string();
    c.schedules = "1f1b";
    c.profile = profile;
    c.json = tmp.file("compare.json");
    const Run cmp = run([&](std::ostream& o, std::ostream& e) { return run_compare(c, o, e); });
    CHECK(cmp.code == kExitBadInput);
    check_every_line_names(cmp.err, profile);

    CalibrateOptions k;
    k.backend = "cpu";
    k.check = profile;
    const Run cal = run([&](std::ostream& o, std::ostream& e) { return run_calibrate(k, o, e); });
    CHECK(cal.code == kExitBadInput);
    check_every_line_names(cal.err, profile);

    CHECK_MESSAGE(tmp.entries().empty(), "a failed command left files behind");
  }
}

TEST_CASE("a JSON number beyond a double is bad input for validate, not an abort") {
  TempDir tmp;
  const std::string path = tmp.file("x.json");
  write_text(path, "9e308");
  const Run v = run([&](std::ostream& o, std::ostream& e) { return run_validate(path, o, e); });
  CHECK(v.code == kExitBadInput);
  CHECK(v.err.find(path + ": /: invalid JSON: a number beyond the range of a double") !=
        std::string::npos);

  SimulateOptions s;
  s.scenario = kScenario.string();
  s.profile = path;
  const Run sim = run([&](std::ostream& o, std::ostream& e) { return run_simulate(s, o, e); });
  CHECK(sim.code == kExitBadInput);
  check_every_line_names(sim.err, path);
}

}  // namespace parasim::cli
