// The GPU and MPI stacks only when they are used (docs/calibration.md, "Plugins"), tested on the
// built executable run as a process: it links no CUDA and no MPI library, starts and simulates
// with the CUDA libraries absent from the loader path, and `devices` / `calibrate --backend cuda`
// without a usable CUDA plugin (missing, its CUDA libraries missing, from another build) say why
// in one line and exit 3; `calibrate` without a usable MPI plugin runs as one process saying
// why, or, started as one of several ranks, says why in one line and exits 3.
//
// "Absent from the loader path": the program is started through its ELF interpreter (ld.so) with
// --inhibit-cache under `env -i`, so neither /etc/ld.so.cache (which lists /usr/local/cuda's
// lib folder here) nor LD_LIBRARY_PATH can find a library; only the loader's default folders
// (/lib, /usr/lib and their multiarch folders) and RUNPATHs remain. --inhibit-rpath on the
// plugin's path removes the plugin's RUNPATH to CUDA as well, which is a machine without CUDA's
// libraries as far as parasim can tell. LD_DEBUG=libs records every library the loader looks for.
#include <doctest/doctest.h>
#include <elf.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../support/test_support.hpp"
#include "calibrate/mpi_plugin_abi.hpp"
#include "cli/commands.hpp"
#include "tests/cli/sanitizer_env.hpp"
#include "tests/cli/shell_command.hpp"

namespace parasim::cli {
namespace {

namespace fs = std::filesystem;
using namespace parasim::test;

const fs::path kBuildCli = fs::path(PARASIM_BINARY_DIR) / "cli";
const fs::path kExecutable = kBuildCli / "parasim";
const fs::path kCudaPlugin = kBuildCli / "libparasim_cuda.so";
const fs::path kMpiPlugin = kBuildCli / "libparasim_mpi.so";
const fs::path kOtherBuildPluginDir = fs::path(PARASIM_BINARY_DIR) / "tests" / "other-build-plugin";
const fs::path kScenario = kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json";

// The libraries of the GPU stack (and the driver's), by name prefix.
const std::vector<std::string> kCudaLibraries{
    "libcuda", "libcudart", "libcublas", "libcusolver", "libcusparse", "libnvJitLink", "libnccl"};
// Open MPI's libraries (libmpi_cxx included), by name prefix.
const std::vector<std::string> kMpiLibraries{"libmpi", "libopen-pal", "libopen-rte"};

std::string quoted(const std::string& s) { return shell_quote(s); }
std::string quoted(const fs::path& p) {
  return quoted(p.string());
}


// The ELF program interpreter (PT_INTERP) of `elf`, e.g. /lib64/ld-linux-x86-64.so.2.
std::string program_interpreter(const fs::path& elf) {
  const std::string bytes = read_text(elf);
  Elf64_Ehdr header;
  REQUIRE(bytes.size() >= sizeof header);
  std::memcpy(&header, bytes.data(), sizeof header);
  REQUIRE(std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0);
  REQUIRE(header.e_ident[EI_CLASS] == ELFCLASS64);
  for (int i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr program;
    const std::size_t at = header.e_phoff + static_cast<std::size_t>(i) * header.e_phentsize;
    REQUIRE(at + sizeof program <= bytes.size());
    std::memcpy(&program, bytes.data() + at, sizeof program);
    if (program.p_type != PT_INTERP) continue;
    REQUIRE(program.p_offset + program.p_filesz <= bytes.size());
    const char* text = bytes.data() + program.p_offset;
    return std::string(text, strnlen(text, program.p_filesz));
  }
  FAIL("no PT_INTERP in " << elf.string());
  return {};
}

std::string parasim_executable() {
  REQUIRE_MESSAGE(fs::exists(kExecutable), "build all targets first: " << kExecutable.string());
  return kExecutable.string();
}

// `executable ARGS` started by ld.so under `env -i` with the loader cache off (see the top);
// `environment` is put before it (VAR=value ...), `inhibit_rpath` a colon-separated list of
// objects whose RUNPATH is ignored. The loader's LD_DEBUG=libs log goes to files under `log_dir`.
std::string without_cuda_on_loader_path(const std::string& executable, const std::string& args,
                                        const std::string& environment, const fs::path& log_dir,
                                        const std::string& inhibit_rpath = "") {
  return "env -i PATH=/usr/bin:/bin LD_DEBUG=libs LD_DEBUG_OUTPUT=" + quoted(log_dir / "ld") + " " +
         environment + " " + quoted(program_interpreter(executable)) + " --inhibit-cache " +
         (inhibit_rpath.empty() ? "" : "--inhibit-rpath " + quoted(inhibit_rpath) + " ") +
         quoted(executable) + " " + args;
}

// Everything the loader logged under `log_dir` (one file per process).
std::string loader_log(const fs::path& log_dir) {
  std::string log;
  for (const auto& entry : fs::directory_iterator(log_dir)) {
    if (entry.path().filename().string().rfind("ld.", 0) == 0) log += read_text(entry.path());
  }
  return log;
}

// The library names the loader looked for ("find library=NAME" lines of LD_DEBUG=libs).
std::vector<std::string> libraries_looked_for(const std::string& log) {
  std::vector<std::string> names;
  const std::string key = "find library=";
  for (auto at = log.find(key); at != std::string::npos; at = log.find(key, at + 1)) {
    const auto begin = at + key.size();
    names.push_back(log.substr(begin, log.find_first_of(" ;\n", begin) - begin));
  }
  return names;
}

void check_no_cuda_or_mpi_library(const std::vector<std::string>& names, const std::string& what) {
  for (const std::string& name : names) {
    for (const auto* family : {&kCudaLibraries, &kMpiLibraries}) {
      for (const std::string& library : *family) {
        CHECK_MESSAGE(name.rfind(library, 0) != 0, what << " looked for " << name);
      }
    }
  }
}

// The number of lines of `text` (a last line without a newline counts).
std::size_t line_count(const std::string& text) {
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  return lines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

}  // namespace

TEST_CASE("plugins: the parasim executable links no CUDA and no MPI library") {
  int code = 0;
  std::string ldd;
  std::tie(code, ldd) = run_shell("ldd " + quoted(parasim_executable()) + " 2>&1");
  REQUIRE_MESSAGE(code == 0, ldd);
  REQUIRE(ldd.find("libstdc++") != std::string::npos);  // the listing is real
  for (const auto* family : {&kCudaLibraries, &kMpiLibraries}) {
    for (const std::string& library : *family) {
      CHECK_MESSAGE(ldd.find(library) == std::string::npos, library << " is linked:\n" << ldd);
    }
  }
  int readelf_code = 0;
  std::string dynamic;
  std::tie(readelf_code, dynamic) = run_shell("readelf -d " + quoted(kExecutable) + " 2>&1");
  if (readelf_code == 0) {
    CHECK_MESSAGE(dynamic.find("cuda") == std::string::npos, dynamic);
    CHECK_MESSAGE(dynamic.find("mpi") == std::string::npos, dynamic);
  }
}

TEST_CASE("plugins: simulate, validate, list and --version run with no CUDA library reachable") {
  const std::string exe = parasim_executable();
  int plain_code = 0;
  std::string plain;
  std::tie(plain_code, plain) =
      run_shell(quoted(exe) + " simulate " + quoted(kScenario) + " --json - 2>/dev/null");
  REQUIRE(plain_code == 0);
  const double step_time = parse_json(plain, "simulate --json -").at("step_time_s").get<double>();

  const std::vector<std::string> commands{"simulate " + quoted(kScenario) + " --json -",
                                          "validate " + quoted(kScenario), "list", "--version"};
  for (const std::string& command : commands) {
    CAPTURE(command);
    TempDir logs;
    int code = 0;
    std::string out;
    std::tie(code, out) =
        run_shell(without_cuda_on_loader_path(exe, command, "", logs.path()) + " 2>/dev/null");
    CHECK_MESSAGE(code == kExitOk, out);
    const std::vector<std::string> looked_for = libraries_looked_for(loader_log(logs.path()));
    // The log is real: it has the libraries the executable needs.
    CHECK(std::find(looked_for.begin(), looked_for.end(), "libstdc++.so.6") != looked_for.end());
    check_no_cuda_or_mpi_library(looked_for, command);
    if (command.rfind("simulate", 0) == 0 && code == kExitOk) {
      // The same result, bit for bit, as the ordinary run.
      CHECK(parse_json(out, "simulate --json -").at("step_time_s").get<double>() == step_time);
    }
  }
}

TEST_CASE("plugins: devices and calibrate --backend cuda without the plugin: one line, exit 3") {
  TempDir tmp;
  // A copy of the executable with no plugin beside it (nor in ../lib/parasim).
  const fs::path alone = tmp.path() / "bin" / "parasim";
  fs::create_directories(alone.parent_path());
  fs::copy_file(parasim_executable(), alone);
  const bool cuda = fs::exists(kCudaPlugin);
  const std::string why =
      cuda ? "libparasim_cuda.so was not found (looked in " + alone.parent_path().string()
           : std::string("built without CUDA");

  int devices_code = 0;
  std::string devices;
  std::tie(devices_code, devices) = run_shell(quoted(alone) + " devices 2>&1");
  CHECK(devices_code == kExitNoDevice);
  CHECK_MESSAGE(devices.rfind("CUDA plugin: not loaded\nNo GPUs visible: ", 0) == 0, devices);
  CHECK_MESSAGE(devices.find(why) != std::string::npos, devices);

  const std::string profile = tmp.file("p.json");
  int calibrate_code = 0;
  std::string calibrate;
  std::tie(calibrate_code, calibrate) =
      run_shell(test::mpi_sanitizer_env() + quoted(alone) +
                " calibrate --backend cuda --quick --out " + quoted(profile) + " 2>&1");
  CHECK(calibrate_code == kExitNoDevice);
  CHECK_MESSAGE(line_count(calibrate) == 1, calibrate);
  CHECK_MESSAGE(calibrate.rfind("parasim calibrate: no GPU to calibrate: ", 0) == 0, calibrate);
  CHECK_MESSAGE(calibrate.find(why) != std::string::npos, calibrate);
  CHECK_FALSE(fs::exists(profile));

  // PARASIM_PLUGIN_DIR names the only folder searched: an empty one has no plugin.
  if (cuda) {
    fs::create_directory(tmp.path() / "empty");
    int code = 0;
    std::string out;
    std::tie(code, out) = run_shell("PARASIM_PLUGIN_DIR=" + quoted(tmp.path() / "empty") + " " +
                                    quoted(kExecutable) + " devices 2>&1");
    CHECK(code == kExitNoDevice);
    CHECK_MESSAGE(out.find("was not found (looked in " + (tmp.path() / "empty").string() +
                           ", the folder PARASIM_PLUGIN_DIR names)") != std::string::npos,
                  out);
  }
}

TEST_CASE("plugins: the CUDA plugin without its CUDA libraries: dlopen's reason, exit 3") {
  if (!fs::exists(kCudaPlugin)) return;  // built without CUDA: the case above covers it
  TempDir tmp;
  const std::string environment = "PARASIM_PLUGIN_DIR=" + quoted(kBuildCli);
  {
    TempDir logs;
    int code = 0;
    std::string out;
    std::tie(code, out) =
        run_shell(without_cuda_on_loader_path(parasim_executable(), "devices", environment,
                                              logs.path(), kCudaPlugin.string()) +
                  " 2>&1");
    CHECK(code == kExitNoDevice);
    CHECK_MESSAGE(out.find("No GPUs visible: the CUDA plugin " + kCudaPlugin.string() +
                           " cannot be loaded: libcu") != std::string::npos,
                  out);
    CHECK_MESSAGE(out.find("cannot open shared object file") != std::string::npos, out);
  }
  TempDir logs;
  const std::string profile = tmp.file("p.json");
  int code = 0;
  std::string out;
  std::tie(code, out) = run_shell(
      without_cuda_on_loader_path(parasim_executable(),
                                  "calibrate --backend cuda --quick --out " + quoted(profile),
                                  environment, logs.path(), kCudaPlugin.string()) +
      " 2>&1");
  CHECK(code == kExitNoDevice);
  CHECK_MESSAGE(line_count(out) == 1, out);
  CHECK_MESSAGE(out.find("cannot open shared object file") != std::string::npos, out);
  CHECK_FALSE(fs::exists(profile));
}

TEST_CASE("plugins: a CUDA plugin from another build is refused by its ABI, exit 3") {
  if (!fs::exists(kCudaPlugin)) return;  // no plugin is ever loaded without CUDA
  REQUIRE(fs::exists(kOtherBuildPluginDir / "libparasim_cuda.so"));
  int code = 0;
  std::string out;
  std::tie(code, out) = run_shell("PARASIM_PLUGIN_DIR=" + quoted(kOtherBuildPluginDir) + " " +
                                  quoted(parasim_executable()) + " devices 2>&1");
  CHECK(code == kExitNoDevice);
  CHECK_MESSAGE(out.find("comes from another parasim build (plugin ABI 999, parasim 0.0.0-other; "
                         "this parasim " PARASIM_VERSION " needs ABI 1)") != std::string::npos,
                out);
}

// `calibrate --backend cpu` measuring RMSNorm and asking for collectives (quick: 4 points, one
// sample each), its profile at `profile`; `environment` (VAR=value ...) goes before it.
std::string calibrate_cpu(const std::string& executable, const std::string& profile,
                          const std::string& environment = "") {
  return test::mpi_sanitizer_env() + environment + " " + quoted(executable) +
         " calibrate --backend cpu --ops norm,collectives --quick -n 1 -w 0" + " --out " +
         quoted(profile) + " 2>&1";
}

TEST_CASE("plugins: calibrate loads the MPI plugin; without it, one process or exit 3") {
  TempDir tmp;
  const bool mpi = fs::exists(kMpiPlugin);
  if (mpi) {  // the build tree's executable finds the plugin beside it: MPI runs (a singleton)
    const std::string profile = tmp.file("with.json");
    int code = 0;
    std::string out;
    std::tie(code, out) = run_shell(calibrate_cpu(parasim_executable(), profile));
    REQUIRE_MESSAGE(code == kExitOk, out);
    const auto provenance = parse_json(read_text(profile), profile).at("provenance");
    CHECK_MESSAGE(provenance.at("mpi").get<std::string>().rfind("Open MPI", 0) == 0, provenance);
  }
  // A copy of the executable with no plugin beside it: one process, saying why.
  const fs::path alone = tmp.path() / "bin" / "parasim";
  fs::create_directories(alone.parent_path());
  fs::copy_file(parasim_executable(), alone);
  const std::string why =
      mpi ? "libparasim_mpi.so was not found (looked in " + alone.parent_path().string()
          : std::string("parasim was built without MPI");
  {
    const std::string profile = tmp.file("alone.json");
    int code = 0;
    std::string out;
    std::tie(code, out) = run_shell(calibrate_cpu(alone.string(), profile));
    REQUIRE_MESSAGE(code == kExitOk, out);
    CHECK_MESSAGE(out.find("note: ") != std::string::npos, out);
    CHECK_MESSAGE(out.find(why) != std::string::npos, out);
    const auto provenance = parse_json(read_text(profile), profile).at("provenance");
    CHECK(provenance.at("ranks").get<int>() == 1);
    CHECK_MESSAGE(provenance.at("mpi").get<std::string>().rfind("Open MPI", 0) != 0, provenance);
  }
  // Started as one of two ranks (the launcher's environment), without MPI: every rank would
  // measure alone, so it refuses in one line, exit 3, nothing written.
  {
    const std::string profile = tmp.file("ranks.json");
    int code = 0;
    std::string out;
    std::tie(code, out) =
        run_shell(calibrate_cpu(alone.string(), profile, "OMPI_COMM_WORLD_SIZE=2"));
    CHECK(code == kExitNoDevice);
    CHECK_MESSAGE(line_count(out) == 1, out);
    CHECK_MESSAGE(out.rfind("parasim calibrate: cannot start the process group: started by "
                            "mpirun as one of 2 ranks, but without MPI: ",
                            0) == 0,
                  out);
    CHECK_MESSAGE(out.find(why) != std::string::npos, out);
    CHECK_FALSE(fs::exists(profile));
  }
  if (mpi) {  // an MPI plugin from another build is refused by its ABI before it is used
    REQUIRE(fs::exists(kOtherBuildPluginDir / "libparasim_mpi.so"));
    const std::string profile = tmp.file("other.json");
    int code = 0;
    std::string out;
    std::tie(code, out) = run_shell(
        calibrate_cpu(parasim_executable(), profile,
                      "OMPI_COMM_WORLD_SIZE=2 PARASIM_PLUGIN_DIR=" + quoted(kOtherBuildPluginDir)));
    CHECK(code == kExitNoDevice);
    CHECK_MESSAGE(line_count(out) == 1, out);
    CHECK_MESSAGE(
        out.find("the MPI plugin " + (kOtherBuildPluginDir / "libparasim_mpi.so").string() +
                 " comes from another parasim build (plugin ABI 999, parasim "
                 "0.0.0-other; this parasim " PARASIM_VERSION " needs ABI " +
                 std::to_string(calib::kMpiPluginAbi) + ")") != std::string::npos,
        out);
    CHECK_FALSE(fs::exists(profile));
  }
}

}  // namespace parasim::cli
