#pragma once
// parasim::calib CPU collectives — MPI collectives on MPI_COMM_WORLD timed the way nccl-tests
// times NCCL's (NVIDIA/nccl-tests src/common.cu): fp32 sum, nccl-tests message sizes (bytes per rank
// for all-reduce, broadcast and send/recv; total gathered size for all-gather, reduce-scatter and
// all-to-all), in place or out of place, `warmup` untimed runs, then per sample: a barrier, the
// collective timed on each rank, and the sample's time is the slowest rank's. Correctness: the
// buffers hold rank-dependent small integers and the last run's result is compared exactly.
// `group` must be the MPI group (group.has_mpi()). Compiled only into libparasim_mpi.so
// (cpu_collectives_mpi.cpp); the executable reaches it through measure_mpi_collective()
// (mpi_plugin.hpp).

#include "calibrate/process_group.hpp"
#include "costmodel/measured_tables.hpp"
#include "kernels/timing_stats.hpp"

namespace parasim::calib {

cost::CollectivePoint measure_cpu_collective(const ProcessGroup& group, cost::CollectiveKind kind,
                                             cost::Bytes message, bool in_place,
                                             const kernels::TimingOptions& options);

}  // namespace parasim::calib
