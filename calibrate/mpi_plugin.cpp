#include "calibrate/mpi_plugin.hpp"

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "calibrate/mpi_plugin_abi.hpp"
#include "calibrate/plugin_library.hpp"
#include "calibrate/single_process_group.hpp"

namespace parasim::calib {
namespace {

struct MpiPlugin {
  const ParasimMpiPlugin* table = nullptr;  // null when it could not be loaded
  std::string error;
};

MpiPlugin load() {
  MpiPlugin plugin;
#if PARASIM_HAVE_MPI
  // RTLD_GLOBAL: Open MPI dlopens its components (mca_*.so), which resolve libmpi's and
  // libopen-pal's symbols from the global scope; loaded RTLD_LOCAL (as a dependency of a local
  // plugin), MPI_Init fails with undefined symbols in them.
  const LoadedPlugin loaded = load_plugin(kMpiPluginFile, kMpiPluginEntry, "the MPI plugin", true);
  if (loaded.outcome != LoadedPlugin::Outcome::kLoaded) {
    plugin.error = loaded.error;
    if (loaded.outcome == LoadedPlugin::Outcome::kNotLoadable) {
      plugin.error += "; it needs the Open MPI libraries it was built with on the loader path";
    }
    return plugin;
  }
  const ParasimPluginHeader* header =
      plugin_table(loaded, kMpiPluginAbi, "the MPI plugin", &plugin.error);
  // The header is the table's first member (standard layout).
  if (header != nullptr) plugin.table = reinterpret_cast<const ParasimMpiPlugin*>(header);
#else
  plugin.error = "parasim was built without MPI (install libopenmpi-dev and rebuild)";
#endif
  return plugin;
}

// Loaded once per process, on first use.
const MpiPlugin& plugin() {
  static const MpiPlugin loaded = load();
  return loaded;
}

int environment_int(const char* name) {
  const char* text = std::getenv(name);
  return text == nullptr ? 0 : std::atoi(text);
}

}  // namespace

int launcher_world_size() {
  const int open_mpi = environment_int("OMPI_COMM_WORLD_SIZE");
  return open_mpi > 0 ? open_mpi : environment_int("PMI_SIZE");
}

int launcher_rank() {
  return std::getenv("OMPI_COMM_WORLD_RANK") != nullptr ? environment_int("OMPI_COMM_WORLD_RANK")
                                                        : environment_int("PMI_RANK");
}

std::unique_ptr<ProcessGroup> open_process_group() {
  const MpiPlugin& p = plugin();
  if (p.table == nullptr) {
    if (launcher_world_size() > 1) {
      throw ProcessGroupUnavailable("started by mpirun as one of " +
                               std::to_string(launcher_world_size()) +
                               " ranks, but without MPI: " + p.error);
    }
    return std::make_unique<SingleProcessGroup>(p.error + "; calibration runs as one process");
  }
  std::string error;
  ProcessGroup* group = p.table->create_group(&error);
  if (group == nullptr) throw std::runtime_error(error);
  return std::unique_ptr<ProcessGroup>(group);
}

cost::CollectivePoint measure_mpi_collective(const ProcessGroup& group, cost::CollectiveKind kind,
                                             cost::Bytes message, bool in_place,
                                             const kernels::TimingOptions& options) {
  const MpiPlugin& p = plugin();
  if (!group.has_mpi() || p.table == nullptr) {
    throw std::runtime_error("collectives need MPI: " + group.no_mpi_reason());
  }
  cost::CollectivePoint point;
  std::string error;
  if (!p.table->measure_collective(&group, kind, message, in_place, &options, &point, &error)) {
    throw std::runtime_error(error);
  }
  return point;
}

}  // namespace parasim::calib
