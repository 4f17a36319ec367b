// `parasim plan` and MPI, run as processes: a plain plan never loads the MPI plugin; started as
// one of several ranks without MPI it refuses in one line (exit 3) from rank 0 only; under
// `mpirun -np 2` its standard output, --out and --json files are byte-identical to one process
// (skipped, saying so, where mpirun or the MPI plugin is missing).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <tuple>

#include "../support/test_support.hpp"
#include "cli/commands.hpp"
#include "tests/cli/sanitizer_env.hpp"
#include "tests/cli/shell_command.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;
using namespace parasim::test;

const fs::path kExecutable = fs::path(PARASIM_BINARY_DIR) / "cli" / "parasim";
const fs::path kMpiPlugin = fs::path(PARASIM_BINARY_DIR) / "cli" / "libparasim_mpi.so";

// A plan of a few thousand candidates that runs in about a second: a small Llama with
// grouped-query attention on one 8-GPU node.
const char* kScenario = R"({
  "name": "mpi-plan-llama",
  "model": {"layers": 8, "hidden": 2048, "heads": 16, "kv_heads": 4, "ffn_hidden": 5632,
            "vocab": 32000, "seq_len": 2048, "mlp": "swiglu", "norm": "rmsnorm",
            "dropout": false},
  "cluster": "dgx-h100",
  "training": {"global_batch": 16, "micro_batch": 1},
  "parallel": {"dp": 8},
  "optimizer": {"name": "adamw"},
  "search": {"micro_batch": [1, 2, 4], "chunks": [1, 2]}
})";

std::string executable() {
  REQUIRE_MESSAGE(fs::exists(kExecutable), "build all targets first: " << kExecutable.string());
  return kExecutable.string();
}

std::size_t line_count(const std::string& text) {
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  return lines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

TEST_CASE("plan: a plain run never loads the MPI plugin nor Open MPI") {
  TempDir tmp;
  write_text(tmp.file("s.json"), kScenario);
  int code = 0;
  std::string out;
  std::tie(code, out) =
      run_shell("LD_DEBUG=libs LD_DEBUG_OUTPUT=" + shell_quote(tmp.file("ld")) + " " +
                shell_quote(executable()) + " plan " + shell_quote(tmp.file("s.json")) +
                " --top 1 --max-simulate 1 2>&1");
  REQUIRE_MESSAGE(code == kExitOk, out);
  std::string log;
  for (const auto& entry : fs::directory_iterator(tmp.path())) {
    if (entry.path().filename().string().rfind("ld.", 0) == 0) log += read_text(entry.path());
  }
  REQUIRE(log.find("libstdc++") != std::string::npos);  // the log is real
  CHECK_MESSAGE(log.find("libparasim_mpi") == std::string::npos, "the MPI plugin was loaded");
  CHECK_MESSAGE(log.find("libmpi") == std::string::npos, "Open MPI was loaded");
}

TEST_CASE("plan: one of several ranks without MPI: one line from rank 0, exit 3, nothing written") {
  TempDir tmp;
  write_text(tmp.file("s.json"), kScenario);
  // A copy of the executable with no plugin beside it.
  const fs::path alone = tmp.path() / "bin" / "parasim";
  fs::create_directories(alone.parent_path());
  fs::copy_file(executable(), alone);
  const std::string args = " plan " + shell_quote(tmp.file("s.json")) + " --out " +
                           shell_quote(tmp.file("plan.json")) + " 2>&1";
  int code = 0;
  std::string out;
  std::tie(code, out) = run_shell("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 " +
                                  shell_quote(alone.string()) + args);
  CHECK(code == kExitNoDevice);
  CHECK_MESSAGE(line_count(out) == 1, out);
  CHECK_MESSAGE(out.rfind("parasim plan: cannot share the search among the ranks: started by "
                          "mpirun as one of 2 ranks, but without MPI: ",
                          0) == 0,
                out);
  int other_code = 0;
  std::string other;
  std::tie(other_code, other) = run_shell("OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 " +
                                          shell_quote(alone.string()) + args);
  CHECK(other_code == kExitNoDevice);
  CHECK_MESSAGE(other.empty(), other);
  CHECK_FALSE(fs::exists(tmp.file("plan.json")));
}

TEST_CASE("plan: under mpirun -np 2 the same bytes out as one process") {
  int found = 0;
  std::string mpirun;
  std::tie(found, mpirun) = run_shell("command -v mpirun");
  if (found != 0) {
    MESSAGE("mpirun is not installed: the mpirun -np 2 plan test is skipped");
    return;
  }
  if (!fs::exists(kMpiPlugin)) {
    MESSAGE("parasim was built without MPI (no libparasim_mpi.so): the mpirun test is skipped");
    return;
  }
  TempDir tmp;
  write_text(tmp.file("s.json"), kScenario);
  fs::create_directory(tmp.path() / "one");
  fs::create_directory(tmp.path() / "two");
  // The same command line in each folder (the plan file records it), outputs relative to it.
  const std::string plan = shell_quote(executable()) + " plan " + shell_quote(tmp.file("s.json")) +
                           " --out plan.json --json candidates.json";
  // Open MPI refuses root without these (containers, CI); two ranks may exceed a runner's cores.
  const std::string mpi_env = mpi_sanitizer_env() +
                              "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                              "OMPI_MCA_rmaps_base_oversubscribe=1 ";
  // Each pair with the same command line: the default threads (one process: every core; each
  // rank: its share of the cores) and 3 threads per process.
  for (const std::string threads : {"", " --threads 3"}) {
    CAPTURE(threads);
    for (const char* folder : {"one", "two"}) {
      for (const auto& entry : fs::directory_iterator(tmp.path() / folder)) fs::remove(entry.path());
    }
    int one_code = 0, two_code = 0;
    std::string one_out, two_out;
    std::tie(one_code, one_out) = run_shell("cd " + shell_quote(tmp.file("one")) + " && " + plan +
                                            threads + " >stdout.txt 2>stderr.txt");
    REQUIRE_MESSAGE(one_code == kExitOk, read_text(tmp.file("one/stderr.txt")));
    std::tie(two_code, two_out) =
        run_shell("cd " + shell_quote(tmp.file("two")) + " && " + mpi_env + "mpirun -np 2 " +
                  plan + threads + " >stdout.txt 2>stderr.txt");
    REQUIRE_MESSAGE(two_code == kExitOk, read_text(tmp.file("two/stderr.txt")));
    // Rank 0 wrote every output, the other rank nothing: stderr stays empty as with one process.
    for (const std::string file : {"stdout.txt", "stderr.txt", "plan.json", "candidates.json"}) {
      CAPTURE(file);
      const std::string a = read_text(tmp.path() / "one" / file);
      const std::string b = read_text(tmp.path() / "two" / file);
      CHECK(a.empty() == (file == "stderr.txt"));
      CHECK(a == b);
    }
  }
}

}  // namespace
}  // namespace parasim::cli
