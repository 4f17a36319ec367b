// Tests of the built parasim executable, run as a process.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"
#include "tests/cli/sanitizer_env.hpp"
#include "tests/cli/shell_command.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace parasim::test;

const fs::path kExecutable = fs::path(PARASIM_BINARY_DIR) / "cli" / "parasim";
const fs::path kScenario = kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json";

}  // namespace

namespace {


std::string parasim_command() {
  REQUIRE_MESSAGE(fs::exists(kExecutable),
                  "the parasim executable is missing at "
                      << kExecutable.string()
                      << "; build all targets (cmake --build BUILD) before running the tests");
  return shell_quote(kExecutable.string());
}

// Runs `parasim ARGS` with stdout and stderr together (or stderr dropped); the exit code and
// the output.
std::pair<int, std::string> run_parasim(const std::string& args, bool keep_stderr = true) {
  return run_shell(parasim_command() + " " + args + (keep_stderr ? " 2>&1" : " 2>/dev/null"));
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
    int code = 0;
    std::string output;
    std::tie(code, output) = run_parasim("validate " + shell_quote(file.string()));
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
  int code2 = 0;
  std::string stdout_only;
  std::tie(code2, stdout_only) =
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

  int code2 = 0;
  std::string output2;
  std::tie(code2, output2) = run_parasim("");
  CHECK(code2 != 0);
  CHECK(output2.find("--help") != std::string::npos);
}

TEST_CASE("process: a mistyped command or option gets a suggestion and exit 2") {
  int code = 0;
  std::string output;
  std::tie(code, output) = run_parasim("simulat x.json");
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(
      output.find("unknown command \"simulat\"; did you mean \"simulate\"?") != std::string::npos,
      output);
  int v_code = 0;
  std::string v_output;
  std::tie(v_code, v_output) = run_parasim("-V");
  CHECK(v_code == kExitBadInput);
  CHECK_MESSAGE(
      v_output.find("unknown option \"-V\"; did you mean \"--version\"?") != std::string::npos,
      v_output);
  int o_code = 0;
  std::string o_output;
  std::tie(o_code, o_output) =
      run_parasim("simulate " + shell_quote(kScenario.string()) + " --jsn r.json");
  CHECK(o_code == kExitBadInput);
  CHECK_MESSAGE(o_output.find("\"--jsn\": did you mean \"--json\"?") != std::string::npos,
                o_output);
}

TEST_CASE("process: --version prints one line that ends with a newline") {
  int code = 0;
  std::string output;
  std::tie(code, output) = run_parasim("--version");
  CHECK(code == 0);
  CHECK(output == "parasim " PARASIM_VERSION "\n");
}

TEST_CASE("process: a missing or folder input: one message in every command") {
  TempDir tmp;
  const std::string missing = tmp.file("missing.json");
  const std::string expected = missing + ": /: cannot read: No such file or directory\n";
  const std::string scenario = shell_quote(kScenario.string());
  for (const std::string& args :
       {"validate " + shell_quote(missing), "simulate " + shell_quote(missing),
        "compare " + shell_quote(missing),
        "simulate " + scenario + " --profile " + shell_quote(missing),
        "compare " + scenario + " --profile " + shell_quote(missing),
        "calibrate --backend cpu --check " + shell_quote(missing)}) {
    CAPTURE(args);
    int code = 0;
    std::string output;
    std::tie(code, output) = run_parasim(args);
    CHECK(code == kExitBadInput);
    CHECK(output == expected);
  }
  const std::string folder = tmp.path().string();
  for (const char* command : {"validate ", "simulate ", "compare "}) {
    CAPTURE(command);
    int code = 0;
    std::string output;
    std::tie(code, output) = run_parasim(command + shell_quote(folder));
    CHECK(code == kExitBadInput);
    CHECK(output == folder + ": /: cannot read: it is a folder (expected a JSON file)\n");
  }
}

TEST_CASE("process: terminal escape codes in a scenario's name are printed escaped") {
  TempDir tmp;
  json s = parse_json(read_text(kScenario), "the scenario");
  s["name"] =
      "\x1b[31mred\x1b]0;title\x07\r\xc2\x9b"
      "2J";
  const std::string path = tmp.file("escapes.json");
  write_text(path, s.dump());
  for (const char* command : {"validate ", "simulate "}) {
    CAPTURE(command);
    int code = 0;
    std::string output;
    std::tie(code, output) = run_parasim(command + shell_quote(path));
    CHECK(code == 0);
    CHECK(output.find('\x1b') == std::string::npos);
    CHECK(output.find('\r') == std::string::npos);
    CHECK(output.find("\xc2\x9b") == std::string::npos);
    CHECK_MESSAGE(output.find("\\x1b[31mred\\x1b]0;title\\x07\\x0d\\u009b2J") != std::string::npos,
                  output.substr(0, 300));
  }
  // The JSON on standard output is still valid and carries the name unchanged.
  int code = 0;
  std::string output;
  std::tie(code, output) = run_parasim("simulate " + shell_quote(path) + " --json -", false);
  CHECK(code == 0);
  CHECK(parse_json(output, "standard output").at("scenario") == s["name"]);
}

TEST_CASE("process: calibrate with nothing to measure, or into a folder, writes nothing (exit 2)") {
  TempDir tmp;
  const std::string profile = tmp.file("y.json");
  int code = 0;
  std::string output;
  std::tie(code, output) =
      run_shell(test::mpi_sanitizer_env() + parasim_command() +
                " calibrate --backend cpu --quick --ops launch,overlap --out " +
                shell_quote(profile) + " 2>&1");
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(output.find("nothing to measure, so no profile is written") != std::string::npos,
                output);
  CHECK(output.find("launch: the cpu backend does not measure kernel launch overhead") !=
        std::string::npos);
  CHECK(output.find("overlap: the cpu backend does not measure") != std::string::npos);
  CHECK(tmp.entries().empty());

  fs::create_directory(tmp.path() / "D");
  int dir_code = 0;
  std::string dir_output;
  std::tie(dir_code, dir_output) = run_shell(test::mpi_sanitizer_env() + parasim_command() +
                                             " calibrate --backend cpu --quick --ops norm --out " +
                                             shell_quote(tmp.file("D")) + " 2>&1");
  CHECK(dir_code == kExitBadInput);
  CHECK_MESSAGE(
      dir_output.find("cannot write " + tmp.file("D") + ": it is a folder") != std::string::npos,
      dir_output);
  CHECK(dir_output.find("holds what was measured") == std::string::npos);
  CHECK(dir_output.find("calibrating") == std::string::npos);  // refused before measuring
  CHECK(fs::is_empty(tmp.path() / "D"));
}

// The shell commands of README.md's ```sh blocks, one per line, except the two set-up commands
// at the top (CI runs them itself) and lines marked "# needs a GPU" (README.md says so).
std::vector<std::string> readme_commands() {
  std::istringstream lines(read_text(kSourceDir / "README.md"));
  std::vector<std::string> commands;
  bool in_block = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("```", 0) == 0) {
      in_block = !in_block && line == "```sh";
      continue;
    }
    if (!in_block || line.empty() || line[0] == '#') continue;
    if (line.rfind("bash scripts/build.sh", 0) == 0 || line.rfind("bash scripts/test.sh", 0) == 0) {
      continue;
    }
    if (line.find("# needs a GPU") != std::string::npos) continue;
    commands.push_back(line);
  }
  return commands;
}

TEST_CASE("process: every command of the README runs as written") {
  const std::vector<std::string> commands = readme_commands();
  REQUIRE(commands.size() >= 10);
  // A folder laid out like the repository after the build: build/, scenarios/ and tests/ (its
  // public trace).
  TempDir tmp;
  fs::create_directory_symlink(fs::path(PARASIM_BINARY_DIR), tmp.path() / "build");
  fs::create_directory_symlink(kSourceDir / "scenarios", tmp.path() / "scenarios");
  fs::create_directory_symlink(kSourceDir / "tests", tmp.path() / "tests");
  // Each command on a line of its own (its trailing comment then ends there), its output in
  // log.txt, the check of its exit code on the next line; fd 3 is the test's pipe.
  std::string script =
      "set -uo pipefail\ncd " + shell_quote(tmp.path().string()) + "\nexec 3>&1 >>log.txt 2>&1\n";
  // The README's mpirun line initialises MPI (see tests/cli/sanitizer_env.hpp).
  if (const std::string env = test::mpi_sanitizer_env(); !env.empty())
    script += "export " + env + "\n";
  for (const std::string& command : commands) {
    script += "echo " + shell_quote("+ " + command) + " >&3\n" + command + "\n" +
              "status=$?; if [ $status -ne 0 ]; then echo \"FAILED with exit code $status\" >&3; "
              "tail -n 20 log.txt >&3; exit 1; fi\n";
  }
  const std::string script_path = tmp.file("readme.sh");
  write_text(script_path, script);
  int code = 0;
  std::string output;
  std::tie(code, output) = run_shell("bash " + shell_quote(script_path) + " 2>&1");
  CHECK_MESSAGE(code == 0, output);
  // What the commands promise to leave behind.
  for (const char* file :
       {"r.json", "t.json", "part.json", "plan.json", "cpu.json", "pics", "trace-profile.json"}) {
    CHECK_MESSAGE(fs::exists(tmp.path() / file), file << " is missing");
  }
}

TEST_CASE("process: --json to a character device leaves the device; a full one is exit 1") {
  // The reproducer (`--json /dev/null` as root) on private device nodes, so that a
  // broken build cannot damage the machine's own; a user's run uses the real ones, which a user
  // cannot replace.
  TempDir tmp;
  const bool root = ::geteuid() == 0;
  const std::string null = root ? tmp.file("null") : "/dev/null";
  const std::string full = root ? tmp.file("full") : "/dev/full";
  if (root && (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0 ||
               ::mknod(full.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0)) {
    MESSAGE("root may not create device nodes here (no CAP_MKNOD): skipped");
    return;
  }
  auto is_device = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
  };
  const std::string scenario = shell_quote(kScenario.string());
  int code = 0;
  std::string output;
  std::tie(code, output) = run_parasim("simulate " + scenario + " --json " + shell_quote(null));
  CHECK_MESSAGE(code == 0, output);
  CHECK(is_device(null));

  int full_code = 0;
  std::string full_output;
  std::tie(full_code, full_output) =
      run_parasim("simulate " + scenario + " --json " + shell_quote(full));
  CHECK(full_code == kExitFailure);
  CHECK_MESSAGE(
      full_output.find("cannot write " + full + ": No space left on device") != std::string::npos,
      full_output);
  CHECK(is_device(full));

  // The text report into a full standard output is a failure too.
  int report_code = 0;
  std::string report_output;
  std::tie(report_code, report_output) =
      run_shell(parasim_command() + " simulate " + scenario + " 2>&1 >" + shell_quote(full));
  CHECK(report_code == kExitFailure);
  CHECK_MESSAGE(report_output.find("cannot write standard output") != std::string::npos,
                report_output);
  CHECK(is_device(full));
}

TEST_CASE("process: a reader that goes away is a write error, not SIGPIPE; nothing is left") {
  // The trace (megabytes) to a FIFO whose reader reads one byte and leaves, the JSON to a file
  // that exists: exit 1 with a message, the file put back as it was, no staged or backup file
  // left (SIGPIPE ended the command with 141 and left the backup behind). The reader is blocked
  // in its open long before the simulation ends, so the FIFO has a reader when it is opened.
  TempDir tmp;
  const std::string fifo = tmp.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string json = tmp.file("r.json");
  write_text(json, "old\n");
  const std::string scenario = shell_quote(kScenario.string());
  int code = 0;
  std::string output;
  const std::string script = "head -c 1 " + shell_quote(fifo) + " > /dev/null & " +
                             parasim_command() + " simulate " + scenario + " --json " +
                             shell_quote(json) + " --trace " + shell_quote(fifo) +
                             " 2>&1; echo \"exit $?\"; wait";
  std::tie(code, output) = run_shell("bash -c " + shell_quote(script));
  CHECK_MESSAGE(output.find("exit 1\n") != std::string::npos, output);
  CHECK(output.find("exit 141") == std::string::npos);
  std::vector<std::string> left = tmp.entries();
  std::sort(left.begin(), left.end());
  CHECK(left == std::vector<std::string>{"pipe", "r.json"});
  CHECK(read_text(json) == "old\n");
  // Standard output into a pipe that closes: exit 1 (the message on standard error), not 141.
  const std::string piped = parasim_command() + " simulate " + scenario +
                            " --trace - 2>/dev/null | head -c 1 > /dev/null; "
                            "echo \"exit ${PIPESTATUS[0]}\"";
  std::tie(code, output) = run_shell("bash -c " + shell_quote(piped));
  CHECK_MESSAGE(output.find("exit 1") != std::string::npos, output);
}

}  // namespace parasim::cli
