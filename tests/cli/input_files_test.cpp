// Bad input files through the commands that read them: every malformed profile of
// tests/data/bad-profile is reported by `simulate --profile`, `compare --profile` and
// `calibrate --check` with exit code 2, naming the profile (not the scenario) and the JSON path,
// and nothing is written; JSON numbers beyond a double are bad input, not a crash; the work
// limits (--max-ops, --max-memory, --max-shampoo-blocks) refuse a simulation before it starts,
// in validate as in simulate and compare.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>

#include "../support/test_support.hpp"
#include "command_run.hpp"
#include "cli/commands.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;
using namespace parasim::test;

const fs::path kScenario = kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json";

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

// A copy of the llama2-7b scenario with `optimizer` as its optimizer section.
std::string with_optimizer(const TempDir& tmp, const std::string& optimizer) {
  std::string text = read_text(kScenario);
  const std::string adamw = R"("optimizer": {"name": "adamw"})";
  const auto at = text.find(adamw);
  REQUIRE(at != std::string::npos);
  text.replace(at, adamw.size(), R"("optimizer": )" + optimizer);
  const std::string path = tmp.file("shampoo.json");
  write_text(path, text);
  return path;
}

const fs::path kExecutable = fs::path(PARASIM_BINARY_DIR) / "cli" / "parasim";

// `parasim ARGS` as a process, stdout and stderr together: the exit code and the output.
std::pair<int, std::string> run_parasim(const std::string& args) {
  REQUIRE(fs::exists(kExecutable));
  FILE* pipe = popen(("'" + kExecutable.string() + "' " + args + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  REQUIRE(WIFEXITED(status));
  return {WEXITSTATUS(status), output};
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
    const Run sim = run_command([&](std::ostream& o, std::ostream& e) { return run_simulate(s, o, e); });
    CHECK(sim.code == kExitBadInput);
    CHECK(sim.out.empty());
    check_every_line_names(sim.err, profile);
    for (const auto& problem : problems) {
      const auto& path = problem.first;  // a named reference: clang 14 cannot capture a binding
      CHECK_MESSAGE(sim.err.find(profile + ": " + path + ": ") != std::string::npos,
                    "no problem at " << path << " in:\n" << sim.err);
    }

    CompareOptions c;
    c.scenario = kScenario.string();
    c.schedules = "1f1b";
    c.profile = profile;
    c.json = tmp.file("compare.json");
    const Run cmp = run_command([&](std::ostream& o, std::ostream& e) { return run_compare(c, o, e); });
    CHECK(cmp.code == kExitBadInput);
    check_every_line_names(cmp.err, profile);

    CalibrateOptions k;
    k.backend = "cpu";
    k.check = profile;
    const Run cal = run_command([&](std::ostream& o, std::ostream& e) { return run_calibrate(k, o, e); });
    CHECK(cal.code == kExitBadInput);
    check_every_line_names(cal.err, profile);

    CHECK_MESSAGE(tmp.entries().empty(), "a failed command left files behind");
  }
}

TEST_CASE("a JSON number beyond a double is bad input for validate, not an abort") {
  TempDir tmp;
  const std::string path = tmp.file("x.json");
  write_text(path, "9e308");
  const Run v = run_command([&](std::ostream& o, std::ostream& e) { return run_validate(path, o, e); });
  CHECK(v.code == kExitBadInput);
  CHECK(v.err.find(path + ": /: invalid JSON: a number beyond the range of a double") !=
        std::string::npos);

  SimulateOptions s;
  s.scenario = kScenario.string();
  s.profile = path;
  const Run sim = run_command([&](std::ostream& o, std::ostream& e) { return run_simulate(s, o, e); });
  CHECK(sim.code == kExitBadInput);
  check_every_line_names(sim.err, path);
}


TEST_CASE("work limits: Shampoo with 16 x 16 blocks is refused by validate, simulate and compare") {
  TempDir tmp;
  const std::string path = with_optimizer(tmp, R"({"name": "shampoo", "block_size": 16})");
  const std::string expected =
      path + ": /optimizer/block_size: block_size 16 cuts the weights into about 13.2 million "
             "Shampoo blocks (all stages), over the limit of 1.0 million (--max-shampoo-blocks "
             "raises it)";
  const Run v = run_command([&](std::ostream& o, std::ostream& e) { return run_validate(path, o, e); });
  CHECK(v.code == kExitBadInput);
  CHECK(v.out.empty());
  CHECK(v.err.find(expected) == 0);

  SimulateOptions s;
  s.scenario = path;
  s.json = tmp.file("result.json");
  const Run sim = run_command([&](std::ostream& o, std::ostream& e) { return run_simulate(s, o, e); });
  CHECK(sim.code == kExitBadInput);
  CHECK(sim.err.find(expected) == 0);
  CHECK(!fs::exists(s.json));

  CompareOptions c;
  c.scenario = path;
  c.schedules = "1f1b,gpipe";
  const Run cmp = run_command([&](std::ostream& o, std::ostream& e) { return run_compare(c, o, e); });
  CHECK(cmp.code == kExitBadInput);
  CHECK(cmp.err.find(expected) != std::string::npos);
}

TEST_CASE("work limits: validate prints the estimate and checks --full; options lower the limits") {
  const std::string path = kScenario.string();
  const Run v = run_command([&](std::ostream& o, std::ostream& e) { return run_validate(path, o, e); });
  CHECK(v.code == kExitOk);
  CHECK(v.out.find("\n  simulating it: about 5036 ops on 2 simulated GPUs, ") != std::string::npos);
  strat::WorkloadLimits low;
  low.max_ops = 10'000;
  const Run sym = run_command([&](std::ostream& o, std::ostream& e) { return run_validate(path, o, e, low); });
  CHECK(sym.code == kExitOk);  // 5036 ops symmetric
  const Run full =
      run_command([&](std::ostream& o, std::ostream& e) { return run_validate(path, o, e, low, true); });
  CHECK(full.code == kExitBadInput);
  CHECK(full.err.find(path + ": /: the simulation would have about 20.1 thousand ops in --full "
                             "mode, over the limit of 10.0 thousand (--max-ops raises it)") == 0);

  SimulateOptions s;
  s.scenario = path;
  s.full = true;
  s.limits = low;
  const Run sim = run_command([&](std::ostream& o, std::ostream& e) { return run_simulate(s, o, e); });
  CHECK(sim.code == kExitBadInput);
  CHECK(sim.err == full.err);
}

TEST_CASE("process: the limit options parse on simulate, compare and validate") {
  const std::string scenario = "'" + kScenario.string() + "'";
  CHECK(run_parasim("validate " + scenario + " --max-ops 1e9 --max-memory 64GiB "
                    "--max-shampoo-blocks 1e8").first == 0);
  int code = 0;
  std::string out;
  std::tie(code, out) = run_parasim("validate --full " + scenario + " --max-memory '1 MiB'");
  CHECK(code == 2);
  CHECK(out.find("over the limit of 1.000 MiB (--max-memory raises it)") != std::string::npos);
  int bad = 0;
  std::string why;
  std::tie(bad, why) = run_parasim("simulate " + scenario + " --max-memory 12X");
  CHECK(bad == 2);
  CHECK(why.find("--max-memory") != std::string::npos);
  CHECK(run_parasim("simulate " + scenario + " --max-ops 0").first == 2);
  CHECK(run_parasim("compare " + scenario + " --schedules 1f1b --max-ops 100").first == 2);
  int help_code = 0;
  std::string help;
  std::tie(help_code, help) = run_parasim("simulate --help");
  CHECK(help_code == 0);
  for (const char* option : {"--max-ops", "--max-memory", "--max-shampoo-blocks"}) {
    CHECK(help.find(option) != std::string::npos);
  }
}

}  // namespace parasim::cli
