#pragma once
// parasim::calib the MPI process group (process_group_mpi.cpp): the ranks of MPI_COMM_WORLD as a
// ProcessGroup (process_group.hpp). Construction calls MPI_Init_thread (MPI_THREAD_FUNNELED),
// errors return instead of aborting (MPI_ERRORS_RETURN) and become std::runtime_error naming the
// call; destruction calls MPI_Finalize. At most one per process.

#include <memory>

#include "calibrate/process_group.hpp"

namespace parasim::calib {

std::unique_ptr<ProcessGroup> make_mpi_process_group();

}  // namespace parasim::calib
