#pragma once
// The entry point of libparasim_mpi.so, the MPI process group that parasim loads with dlopen
// (plugin_library.hpp) only when a command opens a process group (open_process_group():
// `calibrate`, and `plan` under mpirun), so that no other command maps Open MPI's libraries.
//
// Like the CUDA plugin's (cuda_plugin_abi.hpp): one unmangled function, parasim_mpi_plugin(),
// returns a table that starts with a ParasimPluginHeader the loader checks; the table passes C++
// objects (calib::ProcessGroup, the cost:: and kernels:: types of a collective measurement,
// std::string), so plugin and executable come from the same build: bump kMpiPluginAbi when the
// table or one of those types changes. Exceptions never cross the table's functions; the
// group's own member functions throw std::runtime_error naming the MPI call that failed.

#include <string>

#include "calibrate/plugin_library.hpp"
#include "costmodel/measured_tables.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::calib {
class ProcessGroup;

inline constexpr int kMpiPluginAbi = 2;  // 2: ProcessGroup::gather
inline constexpr const char* kMpiPluginEntry = "parasim_mpi_plugin";
inline constexpr const char* kMpiPluginFile = "libparasim_mpi.so";

}  // namespace parasim::calib

extern "C" {

struct ParasimMpiPlugin {
  ParasimPluginHeader header;  // {kMpiPluginAbi, PARASIM_VERSION} of the build that made it
  // A new MPI process group (mpi_process_group.hpp: MPI_Init_thread); the caller owns it. Null
  // with `*error` set when MPI cannot start. At most one per process.
  parasim::calib::ProcessGroup* (*create_group)(std::string* error);
  // measure_cpu_collective() (cpu_collectives.hpp) over `group`, which create_group made.
  // Collective. False with `*error` set when it failed.
  bool (*measure_collective)(const parasim::calib::ProcessGroup* group,
                             parasim::cost::CollectiveKind kind, parasim::cost::Bytes message,
                             bool in_place, const parasim::kernels::TimingOptions* options,
                             parasim::cost::CollectivePoint* point, std::string* error);
};

// The plugin's one exported symbol (kMpiPluginEntry): the table above, as its header.
const ParasimPluginHeader* parasim_mpi_plugin(void);
}
