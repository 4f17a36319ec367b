// Issue 26's reproducers of crashes, hangs, silently wrong answers and inconsistent exit codes,
// each run as the user ran it (the executable, through a shell): every one is now exit 2 naming
// the file, the JSON path or the option, in well under a second, with nothing written and no
// input touched. The malformed scenarios among them are in tests/data/bad (EXPECTED.txt).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"
#include "shell_command.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;
using namespace parasim::test;

const fs::path kExecutable = fs::path(PARASIM_BINARY_DIR) / "cli" / "parasim";
const fs::path kScenario = kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json";
const fs::path kCustom = kSourceDir / "scenarios" / "custom-cluster.json";

// `parasim ARGS` with stdout and stderr together (stdin closed, so nothing can wait on it), under
// `timeout` so that a hang fails the test instead of blocking the suite.
std::pair<int, std::string> parasim(const std::string& args) {
  REQUIRE(fs::exists(kExecutable));
  return run_shell("timeout 20 " + shell_quote(kExecutable.string()) + " " + args +
                   " 2>&1 < /dev/null");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string quoted(const fs::path& p) { return shell_quote(p.string()); }

}  // namespace

TEST_CASE("reproducer 1 and 10: option values out of range are exit 2 naming the option") {
  const std::string s = quoted(kScenario);
  const std::pair<const char*, const char*> cases[] = {
      {"plan {} --threads 100000", "--threads"},
      {"plan {} --threads 0", "--threads"},
      {"plan {} --gpus 0", "--gpus"},
      {"plan {} --gpus -8", "--gpus"},
      {"plan {} --keep -1", "--keep"},
      {"plan {} --max-candidates nan", "--max-candidates"},
      {"plan {} --max-candidates inf", "--max-candidates"},
      {"plan {} --top 0", "--top"},
      {"simulate {} --max-ops nan", "--max-ops"},
      {"export {} --to megatron --version ''", "--version"},
  };
  for (const auto& [form, option] : cases) {
    std::string command = form;
    command.replace(command.find("{}"), 2, s);
    CAPTURE(command);
    int code = 0;
    std::string output;
    std::tie(code, output) = parasim(command);
    CHECK(code == kExitBadInput);
    CHECK_MESSAGE(contains(output, option), output);
  }
}

TEST_CASE("reproducer 1: threads the system refuses leave the plan to the threads that started") {
  if (const char* asan = std::getenv("ASAN_OPTIONS"); asan != nullptr && *asan != '\0') {
    MESSAGE("sanitizer build: its shadow memory needs more address space than the limit; skipped");
    return;
  }
  // 1 GiB of address space holds about 100 thread stacks of 8 MiB: most of the 1024 threads
  // asked for are refused (std::system_error), and the plan is the same as with one thread.
  const std::string plan = shell_quote(kExecutable.string()) + " plan " + quoted(kCustom) +
                           " --top 2 --search pp=1,2 --search micro_batch=1 ";
  int code = 0;
  std::string output;
  std::tie(code, output) =
      run_shell("bash -c " + shell_quote("ulimit -v 1048576; timeout 60 " + plan +
                                         "--threads 1024") + " 2>&1");
  CHECK_MESSAGE(code == 0, output);
  int one_code = 0;
  std::string one;
  std::tie(one_code, one) = run_shell(plan + "--threads 1 2>&1");
  CHECK(one_code == 0);
  CHECK(output.substr(0, output.find("time:")) == one.substr(0, one.find("time:")));
}

TEST_CASE("reproducer 2: a plan file nested 100,000 deep is refused at its root, not a crash") {
  TempDir tmp;
  const std::string deep = tmp.file("deep.json");
  const int n = 100000;
  write_text(deep, "{\"parasim_plan\":1,\"scenario\":{\"x\":" + std::string(n, '[') +
                       std::string(n, ']') + "}}");
  for (const char* command : {"simulate", "validate", "plan", "compare"}) {
    CAPTURE(command);
    int code = 0;
    std::string output;
    std::tie(code, output) = parasim(std::string(command) + " " + shell_quote(deep));
    CHECK(code == kExitBadInput);
    CHECK_MESSAGE(contains(output, deep + ": /: JSON nested more than 64 levels deep"), output);
  }
  int code = 0;
  std::string output;
  std::tie(code, output) = parasim("export " + shell_quote(deep) + " --to megatron");
  CHECK(code == kExitBadInput);
  CHECK(contains(output, "nested more than 64 levels deep"));
}

TEST_CASE("reproducer 3: a FIFO as any input is refused at once, naming it") {
  TempDir tmp;
  const std::string fifo = tmp.file("f.json");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string f = shell_quote(fifo), s = quoted(kScenario);
  for (const std::string& command :
       {"validate " + f, "simulate " + f, "simulate " + s + " --profile " + f, "plan " + f,
        "export " + f + " --to megatron",
        "validate-against " + quoted(kSourceDir / "scenarios" / "validation") + " --guard " + f,
        "validate-against " + f, "compare " + s + " --profile " + f}) {
    CAPTURE(command);
    const auto start = std::chrono::steady_clock::now();
    int code = 0;
    std::string output;
    std::tie(code, output) = parasim(command);
    CHECK(code == kExitBadInput);
    CHECK_MESSAGE(contains(output, fifo + ": /:"), output);
    CHECK_MESSAGE(contains(output, "FIFO"), output);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  }
}

TEST_CASE("reproducer 4: long search lists are refused before any work, the quadratic checks gone") {
  TempDir tmp;
  nlohmann::json s = parse_json(read_text(kScenario), "scenario");
  s["cluster"] = {{"preset", "dgx-h100"}, {"nodes", 131072}};
  s["parallel"] = {{"dp", 131072}, {"tp", 8}, {"pp", 1}};
  s["training"]["global_batch"] = 262144;
  nlohmann::json gpus = nlohmann::json::array(), micro = nlohmann::json::array(),
                 too_many = nlohmann::json::array();
  for (int g = 8; g <= 1048576; g += 8) gpus.push_back(g);
  for (int m = 1; m <= 1000000; ++m) micro.push_back(m);
  for (int t = 1; t <= 5000; ++t) too_many.push_back(t);
  const std::pair<nlohmann::json, std::string> cases[] = {
      {{{"gpus", gpus}}, "/search: more than"},
      {{{"micro_batch", micro}}, "/search: the axes other than the layout already make"},
      {{{"tp", too_many}}, "/search/tp: more than 4096 different values, the 4096 whole numbers"},
      {{{"tp", {{"min", 18446744073709551615ULL}}}}, "/search/tp/min: expected \"min\" or \"max\""},
  };
  for (const auto& entry : cases) {
    const nlohmann::json& search = entry.first;
    const std::string& message = entry.second;
    s["search"] = search;
    const std::string path = tmp.file("huge.json");
    write_text(path, s.dump());
    CAPTURE(message);
    const auto start = std::chrono::steady_clock::now();
    int code = 0;
    std::string output;
    std::tie(code, output) = parasim("plan " + shell_quote(path));
    CHECK(code == kExitBadInput);
    CHECK_MESSAGE(contains(output, message), output.substr(0, 500));
    // Generous for sanitizer builds; the release build answers in about half a second.
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(15));
  }
}

TEST_CASE("reproducer 5: --gpus wins over search.gpus") {
  TempDir tmp;
  nlohmann::json s = parse_json(read_text(kScenario), "scenario");
  s["search"] = {{"gpus", {8}}, {"pp", {1}}, {"cp", {1}}, {"micro_batch", {2}},
                 {"recompute", {"full"}}, {"zero_stage", {1}}};
  const std::string path = tmp.file("s.json");
  write_text(path, s.dump());
  int code = 0;
  std::string output;
  std::tie(code, output) = parasim("plan " + shell_quote(path) + " --gpus 4 --top 1");
  CHECK_MESSAGE(code == 0, output);
  // The winner's layout column: dp/tp/pp/cp multiplying to 4.
  CHECK_MESSAGE(contains(output, "\n    1  "), output);
  const auto row = output.substr(output.find("\n    1  ") + 8, 30);
  int dp = 0, tp = 0, pp = 0, cp = 0;
  REQUIRE(std::sscanf(row.c_str(), " %d/%d/%d/%d", &dp, &tp, &pp, &cp) == 4);
  CHECK(dp * tp * pp * cp == 4);
}

TEST_CASE("reproducer 7: an output onto the command's own input is exit 2, the input untouched") {
  TempDir tmp;
  const std::string s = tmp.file("s.json");
  const std::string original = read_text(kScenario);
  write_text(s, original);
  const std::string q = shell_quote(s);
  const std::string link = tmp.file("link.json");
  REQUIRE(::symlink(s.c_str(), link.c_str()) == 0);
  for (const std::string& command :
       {"simulate " + q + " --json " + q, "simulate " + q + " --trace " + shell_quote(link),
        "plan " + q + " --out " + q + " --top 1", "plan " + q + " --json " + shell_quote(link),
        "export " + q + " --to megatron --out " + q, "compare " + q + " --json " + q}) {
    CAPTURE(command);
    int code = 0;
    std::string output;
    std::tie(code, output) = parasim(command);
    CHECK(code == kExitBadInput);
    CHECK_MESSAGE(contains(output, "it is the command's"), output);
    CHECK(read_text(s) == original);
  }
}

TEST_CASE("reproducer 8: a FIFO output nobody reads is refused before any output is put in place") {
  TempDir tmp;
  const std::string fifo = tmp.file("out.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string json = tmp.file("r.json");
  const auto start = std::chrono::steady_clock::now();
  int code = 0;
  std::string output;
  std::tie(code, output) = parasim("simulate " + quoted(kScenario) + " --json " +
                                      shell_quote(json) + " --trace " + shell_quote(fifo));
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(contains(output, "it is a FIFO that no process is reading"), output);
  CHECK_FALSE(fs::exists(json));
  CHECK(tmp.entries() == std::vector<std::string>{"out.fifo"});  // no staged file left
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
}

TEST_CASE("reproducer 11: 9e308 in a validation file or a guard is exit 2 naming the file") {
  TempDir tmp;
  const std::string v = tmp.file("v.json");
  write_text(v, R"({"parasim_validation": 1, "source": "x", "cases": [{"measured": 9e308}]})");
  int code = 0;
  std::string output;
  std::tie(code, output) = parasim("validate-against " + shell_quote(v));
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(contains(output, v + ": /: invalid JSON: a number beyond the range"), output);
  // The same file inside a folder: named by its path in the folder.
  const std::string folder = tmp.file("set");
  fs::create_directory(folder);
  write_text(folder + "/v.json", read_text(v));
  std::tie(code, output) = parasim("validate-against " + shell_quote(folder));
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(contains(output, folder + "/v.json: /: invalid JSON"), output);
  const std::string guard = tmp.file("guard.json");
  write_text(guard, R"({"parasim_validation_guard": 1e400})");
  std::tie(code, output) =
      parasim("validate-against " + quoted(kSourceDir / "scenarios" / "validation") +
              " --guard " + shell_quote(guard));
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(contains(output, guard + ": /: invalid JSON"), output);
}

TEST_CASE("reproducer 12: exit codes as the README states them") {
  TempDir tmp;
  const std::string validation = quoted(kSourceDir / "scenarios" / "validation") +
                                 " --filter megatron2021";
  // validate-against: a bad output target is exit 2 naming the target, not the input.
  const std::string read_only = tmp.file("ro.json");
  write_text(read_only, "{}");
  ::chmod(read_only.c_str(), 0444);
  for (const std::string& target :
       {tmp.path().string(), read_only, tmp.file("missing/x.csv")}) {
    for (const char* option : {"--json", "--csv"}) {
      CAPTURE(target);
      int code = 0;
      std::string output;
      std::tie(code, output) =
          parasim("validate-against " + validation + " " + option + " " + shell_quote(target));
      CHECK(code == kExitBadInput);
      CHECK_MESSAGE(contains(output, "cannot write " + target), output);
    }
  }
  // compare --svg onto a file: exit 2 in parasim's words; a failing compare leaves no folder.
  int code = 0;
  std::string output;
  std::tie(code, output) = parasim("compare " + quoted(kScenario) + " --svg " +
                                shell_quote(read_only));
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(contains(output, "cannot write into --svg " + read_only + ": it is a file"),
                output);
  const std::string pictures = tmp.file("pics/deeper");
  std::tie(code, output) = parasim("compare " + quoted(kScenario) + " --svg " +
                                   shell_quote(pictures) + " --json " + shell_quote(tmp.file("missing/c.json")));
  CHECK(code == kExitBadInput);
  CHECK_FALSE(fs::exists(tmp.file("pics")));
  // plan's time-range error is bad input, as simulate's.
  nlohmann::json slow = parse_json(read_text(kCustom), "scenario");
  slow["cluster"]["device"]["peak"]["bf16"] = "1e-7 TFLOP/s";
  slow["cluster"]["device"]["peak"]["fp16"] = "1e-7 TFLOP/s";
  const std::string slow_path = tmp.file("slow.json");
  write_text(slow_path, slow.dump());
  for (const char* command : {"simulate ", "plan "}) {
    std::tie(code, output) = parasim(command + shell_quote(slow_path));
    CAPTURE(command);
    CHECK(code == kExitBadInput);
    CHECK_MESSAGE(contains(output, "outside the simulator's range"), output);
  }
  // validate-against --profile on a folder: parasim's message, not CLI11's.
  std::tie(code, output) = parasim("validate-against " + validation + " --profile " +
                                   shell_quote(tmp.path().string()));
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(contains(output, ": /: cannot read: it is a folder"), output);
  // A full standard output is exit 1 for export as for the others.
  for (const std::string& command : std::vector<std::string>{
           "export " + quoted(kScenario) + " --to megatron", "simulate " + quoted(kScenario),
           "list"}) {
    std::tie(code, output) =
        run_shell("timeout 20 " + shell_quote(kExecutable.string()) + " " + command +
                  " > /dev/full 2>/dev/null; echo $?");
    CAPTURE(command);
    CHECK(output == "1\n");
  }
}

TEST_CASE("reproducer 13: a newline or U+202E in a name or an input path is printed escaped") {
  TempDir tmp;
  nlohmann::json s = parse_json(read_text(kScenario), "scenario");
  s["name"] = "fake\nstep time 0.001 s\xe2\x80\xae";
  const std::string odd = tmp.file("odd\nname\xe2\x80\xae.json");
  write_text(odd, s.dump());
  for (const char* command : {"simulate", "validate"}) {
    int code = 0;
    std::string output;
    std::tie(code, output) = parasim(std::string(command) + " " + shell_quote(odd));
    CAPTURE(command);
    CHECK(code == 0);
    CHECK(output.find("\xe2\x80\xae") == std::string::npos);
    CHECK_FALSE(contains(output, "\nstep time 0.001 s"));
    CHECK_MESSAGE(contains(output, "fake\\x0astep time 0.001 s\\u202e"), output.substr(0, 400));
  }
  int code = 0;
  std::string output;
  std::tie(code, output) = parasim("simulate " + shell_quote(odd + "-missing"));
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(contains(output, "odd\\x0aname\\u202e.json-missing: /: cannot read"), output);
}

TEST_CASE("reproducer 14: validate and plan read the plan files simulate and export read") {
  TempDir tmp;
  const std::string plan_file = (kSourceDir / "tests" / "data" / "plan-llama2-7b.json").string();
  int code = 0;
  std::string output;
  std::tie(code, output) = parasim("validate " + shell_quote(plan_file));
  CHECK_MESSAGE(code == 0, output);
  std::tie(code, output) = parasim("plan " + shell_quote(plan_file) + " --top 1 --search pp=1");
  CHECK_MESSAGE(code == 0, output);
  // One path form for a problem inside a plan, in every command.
  nlohmann::json plan = parse_json(read_text(plan_file), "plan");
  plan["scenario"]["parallel"]["tp"] = 3;
  const std::string bad = tmp.file("bad-plan.json");
  write_text(bad, plan.dump());
  for (const std::string& command :
       {"validate ", "simulate ", "plan ", "compare ", "export --to megatron "}) {
    std::string line = command;
    if (command.rfind("export", 0) == 0) {
      line = "export " + shell_quote(bad) + " --to megatron";
    } else {
      line += shell_quote(bad);
    }
    std::tie(code, output) = parasim(line);
    CAPTURE(line);
    CHECK(code == kExitBadInput);
    CHECK_MESSAGE(contains(output, bad + ": /scenario/parallel/tp: tp (3) must divide"), output);
  }
}

TEST_CASE("reproducer 9: a foreign profile or a GEMM faster than the peak is refused unless allowed") {
  TempDir tmp;
  auto profile = [&](const std::string& backend, const std::string& device, double seconds) {
    nlohmann::json p = {
        {"parasim_profile", 2},
        {"provenance", {{"backend", backend}, {"device", device}}},
        {"complete", true},
        {"measurements",
         {{"gemm",
           {{{"m", 4096}, {"n", 4096}, {"k", 4096}, {"batch", 1}, {"dtype", "bf16"},
             {"transpose_a", false}, {"transpose_b", false}, {"median_s", seconds},
             {"p20_s", seconds}, {"p80_s", seconds}, {"samples", 5}}}}}}};
    const std::string path = tmp.file(backend + "-" + std::to_string(seconds) + ".json");
    write_text(path, p.dump());
    return path;
  };
  const std::string s = quoted(kScenario);  // H100-SXM5-80GB
  const std::string cpu = profile("cpu", "Intel(R) Xeon(R) Platinum 8480+", 0.5);
  const std::string other = profile("cuda", "NVIDIA A100-SXM4-80GB", 0.0005);
  const std::string fast = profile("cuda", "NVIDIA H100 80GB HBM3", 1e-300);
  const std::string same = profile("cuda", "NVIDIA H100 80GB HBM3", 0.0002);
  const std::pair<std::string, std::string> refused[] = {
      {cpu, "/provenance/backend: the profile was measured by the cpu backend"},
      {other, "/provenance/device: the profile was measured on \"NVIDIA A100-SXM4-80GB\" (a100)"},
      {fast, "/measurements/gemm/0/median_s: 1e-300 s for a 4096x4096x4096 GEMM is faster"},
  };
  for (const auto& [path, message] : refused) {
    for (const char* command : {"simulate ", "compare ", "plan "}) {
      CAPTURE(command);
      int code = 0;
      std::string output;
      std::tie(code, output) = parasim(command + s + " --profile " + shell_quote(path) + " --top 1");
      if (std::string(command) != "plan ") {
        std::tie(code, output) = parasim(command + s + " --profile " + shell_quote(path));
      }
      CHECK(code == kExitBadInput);
      CHECK_MESSAGE(contains(output, path + ": " + message), output.substr(0, 600));
    }
    int code = 0;
    std::string output;
    std::tie(code, output) =
        parasim("simulate " + s + " --profile " + shell_quote(path) + " --allow-foreign-profile");
    CHECK_MESSAGE(code == 0, output.substr(0, 600));
  }
  int code = 0;
  std::string output;
  std::tie(code, output) = parasim("simulate " + s + " --profile " + shell_quote(same));
  CHECK_MESSAGE(code == 0, output.substr(0, 600));
  std::tie(code, output) = parasim("validate-against " +
                                   quoted(kSourceDir / "scenarios" / "validation") +
                                   " --profile " + shell_quote(cpu));
  CHECK(code == kExitBadInput);
  CHECK_MESSAGE(contains(output, cpu + ": /provenance/backend"), output.substr(0, 600));
}

TEST_CASE("reproducer 18: parasim_planner_bench --help prints its usage and runs nothing") {
  const fs::path bench = fs::path(PARASIM_BINARY_DIR) / "benchmarks" / "parasim_planner_bench";
  if (!fs::exists(bench)) {
    MESSAGE("no parasim_planner_bench in this build: skipped");
    return;
  }
  int code = 0;
  std::string output;
  std::tie(code, output) = run_shell(shell_quote(bench.string()) + " --help 2>&1");
  CHECK(code == 0);
  CHECK(output.rfind("usage: parasim_planner_bench", 0) == 0);
  CHECK(output.find("screen:") == std::string::npos);  // no search ran
  std::tie(code, output) = run_shell(shell_quote(bench.string()) + " --threads 0 2>&1");
  CHECK(code == 2);
  CHECK(output.find("--threads takes 1 to 1024") != std::string::npos);
}

TEST_CASE("reproducer 16: compare --seq-lens speedups are relative within one length") {
  int code = 0;
  std::string output;
  std::tie(code, output) =
      parasim("compare " + quoted(kSourceDir / "scenarios" / "tsp-7b-mi300x.json") +
              " --layouts tsp,tp --seq-lens 16384,65536");
  REQUIRE_MESSAGE(code == 0, output);
  // Each length's first row is its own base.
  for (const char* label : {"tsp@16K", "tsp@64K"}) {
    const auto at = output.find(std::string("\n") + label);
    REQUIRE(at != std::string::npos);
    CHECK_MESSAGE(output.substr(at, 60).find("1.000x") != std::string::npos, output);
  }
  CHECK(output.find("speedup: over the first variant that applies at the same sequence length") !=
        std::string::npos);
}

}  // namespace parasim::cli
