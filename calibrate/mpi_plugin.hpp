#pragma once
// parasim::calib the MPI plugin from the executable's side: open_process_group()
// (process_group.hpp) loads libparasim_mpi.so (plugin_library.hpp says where from;
// mpi_plugin_abi.hpp is its entry point) on its first call, and only then, so that commands that
// never open a process group (simulate, validate, list, compare, ...) never map Open MPI.
//
// Without the plugin (parasim built without MPI, the plugin not found or not loadable, e.g.
// Open MPI's libraries are not installed), open_process_group() returns a SingleProcessGroup
// whose no_mpi_reason() says so, and calibration runs as one process, as without mpirun, except
// when this process was started by an MPI launcher as one of several ranks (Open MPI's
// OMPI_COMM_WORLD_SIZE or the PMI_SIZE of MPICH's Hydra is above 1): then every rank would
// measure and write alone, so it throws ProcessGroupUnavailable with the reason instead
// (calibrate: exit code 3, as a missing CUDA plugin).

#include <string>

#include "calibrate/process_group.hpp"
#include "costmodel/measured_tables.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::calib {

// The size of the MPI job this process was launched in, from the launcher's environment (0 when
// it was not launched by mpirun / mpiexec).
int launcher_world_size();
// This process's rank in that job, from the same environment (OMPI_COMM_WORLD_RANK or PMI_RANK;
// 0 when not launched by one): which rank speaks before MPI is up.
int launcher_rank();

// The cpu backend's collectives (cpu_collectives.hpp), run by the plugin over `group`, which
// must have MPI (group.has_mpi()). Throws std::runtime_error when the measurement fails.
cost::CollectivePoint measure_mpi_collective(const ProcessGroup& group, cost::CollectiveKind kind,
                                             cost::Bytes message, bool in_place,
                                             const kernels::TimingOptions& options);

}  // namespace parasim::calib
