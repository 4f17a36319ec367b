#include "calibrate/plugin_library.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <system_error>

namespace parasim::calib {
namespace {

namespace fs = std::filesystem;

// The running executable's folder (/proc/self/exe), or empty when the link cannot be read.
fs::path executable_dir() {
  std::error_code error;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error);
  return error ? fs::path() : exe.parent_path();
}

std::string dlerror_text(const char* fallback) {
  const char* text = dlerror();
  return text != nullptr ? std::string(text) : std::string(fallback);
}

std::string joined(const std::vector<fs::path>& dirs) {
  std::string text;
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == dirs.size() ? " and " : ", ") + dirs[i].string();
  }
  return text;
}

}  // namespace

std::vector<fs::path> plugin_search_dirs() {
  if (const char* dir = std::getenv("PARASIM_PLUGIN_DIR"); dir != nullptr) {
    return {fs::path(dir)};
  }
  const fs::path exe_dir = executable_dir();
  if (exe_dir.empty()) return {};
  return {exe_dir, (exe_dir / PARASIM_PLUGIN_DIR_FROM_BIN).lexically_normal()};
}

LoadedPlugin load_plugin(const std::string& file_name, const std::string& entry_symbol,
                         const std::string& what, bool global_symbols) {
  LoadedPlugin loaded;
  const std::vector<fs::path> dirs = plugin_search_dirs();
  for (const fs::path& dir : dirs) {
    std::error_code error;
    if (fs::exists(dir / file_name, error)) {
      loaded.path = (dir / file_name).string();
      break;
    }
  }
  if (loaded.path.empty()) {
    const char* override_note = std::getenv("PARASIM_PLUGIN_DIR") != nullptr
                                    ? ", the folder PARASIM_PLUGIN_DIR names"
                                    : "";
    loaded.error = what + " " + file_name + " was not found (looked in " +
                   (dirs.empty() ? std::string("no folder: /proc/self/exe is unreadable")
                                 : joined(dirs)) +
                   override_note + ")";
    loaded.outcome = LoadedPlugin::Outcome::kNotFound;
    return loaded;
  }
  dlerror();  // clear an earlier error
  void* handle = dlopen(loaded.path.c_str(), RTLD_NOW | (global_symbols ? RTLD_GLOBAL : RTLD_LOCAL));
  if (handle == nullptr) {
    loaded.error = what + " " + loaded.path + " cannot be loaded: " + dlerror_text("dlopen failed");
    loaded.outcome = LoadedPlugin::Outcome::kNotLoadable;
    return loaded;
  }
  dlerror();
  loaded.entry = dlsym(handle, entry_symbol.c_str());
  if (loaded.entry == nullptr) {
    loaded.error = loaded.path + " is not " + what + " (it has no " + entry_symbol +
                   " symbol: " + dlerror_text("dlsym failed") + ")";
    loaded.outcome = LoadedPlugin::Outcome::kNoEntry;
    return loaded;
  }
  loaded.outcome = LoadedPlugin::Outcome::kLoaded;
  return loaded;
}

const ParasimPluginHeader* plugin_table(const LoadedPlugin& loaded, int abi,
                                        const std::string& what, std::string* error) {
  using Entry = const ParasimPluginHeader* (*)();
  Entry entry = nullptr;
  static_assert(sizeof entry == sizeof loaded.entry);
  std::memcpy(&entry, &loaded.entry, sizeof entry);  // POSIX: dlsym's address is the function's
  const ParasimPluginHeader* table = entry();
  if (table != nullptr && table->abi_version == abi && table->parasim_version != nullptr &&
      std::strcmp(table->parasim_version, PARASIM_VERSION) == 0) {
    return table;
  }
  const std::string found =
      table == nullptr ? std::string("no entry table")
                       : "plugin ABI " + std::to_string(table->abi_version) + ", parasim " +
                             (table->parasim_version ? table->parasim_version : "unknown");
  *error = what + " " + loaded.path + " comes from another parasim build (" + found +
           "; this parasim " PARASIM_VERSION " needs ABI " + std::to_string(abi) +
           "): install the plugin built with it";
  return nullptr;
}

}  // namespace parasim::calib
