// Tests of the built parasim executable, run as a process.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace parasim::test;

const fs::path kExecutable = fs::path(PARASIM_BINARY_DIR) / "cli" / "parasim";
const fs::path kScenario = kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json";


}  // namespace

namespace {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `parasim ARGS` with stdout and stderr together (or stderr dropped); the exit code and
// the output.
std::pair<int, std::string> run_parasim(const std::string& args, bool keep_stderr = true) {
  REQUIRE_MESSAGE(fs::exists(kExecutable),
                  "the parasim executable is missing at "
                      << kExecutable.string()
                      << "; build all targets (cmake --build BUILD) before running the tests");
  const std::string command =
      shell_quote(kExecutable.string()) + " " + args + (keep_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE_MESSAGE(pipe != nullptr, "cannot run " << command);
  std::string output;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = pclose(pipe);
  REQUIRE_MESSAGE(WIFEXITED(status), command << " did not exit normally");
  return {WEXITSTATUS(status), output};
}

}  // namespace

TEST_CASE("process: parasim --help names every subcommand") {
  int code = 0;  // not a structured binding: clang 14 cannot capture one in doctest's lambdas
  std::string output;
  std::tie(code, output) = run_parasim("--help");
  CHECK(code == 0);
  for (const char* sub : {"simulate", "validate", "list", "devices"}) {
    CHECK_MESSAGE(output.find(sub) != std::string::npos, sub << " missing from:\n" << output);
  }
  CHECK(output.find("Usage") != std::string::npos);
}

TEST_CASE("process: parasim validate of each bad fixture exits 2") {
  for (const auto& file : json_files_in(kSourceDir / "tests" / "data" / "bad")) {
    CAPTURE(file.string());
    const auto [code, output] = run_parasim("validate " + shell_quote(file.string()));
    CHECK(code == kExitBadInput);
    CHECK(output.find(file.string() + ": ") != std::string::npos);
  }
}

TEST_CASE("process: parasim simulate GOOD --json FILE exits 0 and writes the result") {
  TempDir tmp;
  const std::string result = tmp.file("result.json");
  int code = 0;  // not a structured binding: clang 14 cannot capture one in doctest's lambdas
  std::string output;
  std::tie(code, output) =
      run_parasim("simulate " + shell_quote(kScenario.string()) + " --json " + shell_quote(result));
  CHECK_MESSAGE(code == 0, output);
  CHECK(output.find("Critical path by category") != std::string::npos);
  REQUIRE(fs::exists(result));
  CHECK(parse_json(read_text(result), "the result file").at("step_time_s").get<double>() > 0);
  CHECK(tmp.entries() == std::vector<std::string>{"result.json"});

  // --json -: standard output is exactly the JSON.
  const auto [code2, stdout_only] =
      run_parasim("simulate " + shell_quote(kScenario.string()) + " --json -", false);
  CHECK(code2 == 0);
  CHECK(parse_json(stdout_only, "standard output") ==
        parse_json(read_text(result), "the result file"));
}

TEST_CASE("process: parasim simulate without a scenario fails with a usage hint") {
  int code = 0;  // not a structured binding: clang 14 cannot capture one in doctest's lambdas
  std::string output;
  std::tie(code, output) = run_parasim("simulate");
  CHECK(code != 0);
  CHECK_MESSAGE(output.find("scenario") != std::string::npos, output);
  CHECK_MESSAGE(output.find("required") != std::string::npos, output);
  CHECK_MESSAGE(output.find("--help") != std::string::npos, output);

  const auto [code2, output2] = run_parasim("");
  CHECK(code2 != 0);
  CHECK(output2.find("--help") != std::string::npos);
}

}  // namespace parasim::cli
