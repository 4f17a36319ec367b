#include "calibrate/single_process_group.hpp"

#include <stdexcept>
#include <utility>

namespace parasim::calib {

SingleProcessGroup::SingleProcessGroup(std::string no_mpi_reason)
    : no_mpi_reason_(std::move(no_mpi_reason)) {
  if (no_mpi_reason_.empty()) {
    throw std::logic_error("SingleProcessGroup needs the reason there is no MPI");
  }
}

}  // namespace parasim::calib
