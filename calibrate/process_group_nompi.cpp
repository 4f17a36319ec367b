// ProcessGroup without MPI: always one process (calibrate/process_group.hpp).
#include "calibrate/process_group.hpp"

namespace parasim::calib {

ProcessGroup::ProcessGroup(int* /*argc*/, char*** /*argv*/) {}
ProcessGroup::~ProcessGroup() = default;

bool ProcessGroup::has_mpi() { return false; }
std::string ProcessGroup::mpi_version() { return "none"; }

void ProcessGroup::barrier() const {}
void ProcessGroup::broadcast(void* /*data*/, std::size_t /*size*/) const {}
std::vector<double> ProcessGroup::max(const std::vector<double>& values) const { return values; }
bool ProcessGroup::all(bool value) const { return value; }

}  // namespace parasim::calib
