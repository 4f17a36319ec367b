// open_process_group() (calibrate/process_group.hpp).
#include <memory>

#include "calibrate/process_group.hpp"
#include "calibrate/single_process_group.hpp"

#if PARASIM_HAVE_MPI
#include "calibrate/mpi_process_group.hpp"
#endif

namespace parasim::calib {

std::unique_ptr<ProcessGroup> open_process_group() {
#if PARASIM_HAVE_MPI
  return make_mpi_process_group();
#else
  return std::make_unique<SingleProcessGroup>(
      "parasim was built without MPI (install libopenmpi-dev and rebuild)");
#endif
}

}  // namespace parasim::calib
