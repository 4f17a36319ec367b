#pragma once
// parasim::calib plugin libraries — the shared libraries parasim loads with dlopen, only in the
// commands that need them, so that the executable itself links neither CUDA nor MPI:
// libparasim_cuda.so (the CUDA measurement backend, cuda_plugin.hpp) and libparasim_mpi.so (the
// MPI process group, mpi_plugin.hpp).
//
// Where a plugin is looked for (plugin_search_dirs()), the first folder that has the file wins:
//   1. the folder named by the environment variable PARASIM_PLUGIN_DIR, when it is set (then
//      only there: a test or a packager chooses exactly which plugins parasim sees);
//   2. the executable's own folder (a build tree: build/cli/parasim beside build/cli/lib*.so);
//   3. the executable's folder joined with PARASIM_PLUGIN_DIR_FROM_BIN (an installed tree:
//      bin/parasim and lib/parasim/lib*.so; the relative path comes from CMake's install dirs).
// A loaded plugin stays loaded until the process exits (dlclose is never called): the CUDA and
// MPI runtimes register exit handlers that must not outlive their code.

#include <filesystem>
#include <string>
#include <vector>

extern "C" {
// The first member of every plugin's entry table (cuda_plugin_abi.hpp, mpi_plugin_abi.hpp): what
// the loader checks before it touches the rest. Never changes.
struct ParasimPluginHeader {
  int abi_version;              // the plugin's ABI number, bumped whenever its table or a C++
                                // type that crosses it changes
  const char* parasim_version;  // PARASIM_VERSION of the build that made it
};
}

namespace parasim::calib {

// The folders searched, in order (see above); folders that do not exist are kept, so that a
// message can say where it looked.
std::vector<std::filesystem::path> plugin_search_dirs();

// What load_plugin() found.
struct LoadedPlugin {
  enum class Outcome { kLoaded, kNotFound, kNotLoadable, kNoEntry };
  Outcome outcome = Outcome::kNotFound;
  void* entry = nullptr;  // the address of the entry symbol; null unless kLoaded
  std::string path;       // the file found (empty when none was)
  std::string error;      // why `entry` is null, one line (dlopen's or dlsym's message included)
};

// Finds `file_name` (e.g. "libparasim_cuda.so") in the search folders, dlopens it (RTLD_NOW;
// RTLD_GLOBAL when `global_symbols`, which libraries that dlopen their own components, such as
// Open MPI, need; otherwise RTLD_LOCAL) and looks up `entry_symbol`. Never throws. `what` names
// the plugin in messages, e.g. "the CUDA plugin".
LoadedPlugin load_plugin(const std::string& file_name, const std::string& entry_symbol,
                         const std::string& what, bool global_symbols);

// Calls the entry function of `loaded` (kLoaded): `const ParasimPluginHeader* entry()`, and
// checks that the table it returns has ABI `abi` and this build's PARASIM_VERSION. Returns the
// table, or null with `*error` set (one line naming the plugin, both ABIs and versions).
const ParasimPluginHeader* plugin_table(const LoadedPlugin& loaded, int abi,
                                        const std::string& what, std::string* error);

}  // namespace parasim::calib
