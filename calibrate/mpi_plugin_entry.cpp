// The entry point of libparasim_mpi.so (calibrate/mpi_plugin_abi.hpp); compiled only into the
// plugin, never into the executable.
#include <exception>
#include <string>

#include "calibrate/cpu_collectives.hpp"
#include "calibrate/mpi_plugin_abi.hpp"
#include "calibrate/mpi_process_group.hpp"

namespace parasim::calib {
namespace {

ProcessGroup* create_group(std::string* error) {
  try {
    return make_mpi_process_group().release();
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "an unknown exception while starting MPI";
  }
  return nullptr;
}

bool measure_collective(const ProcessGroup* group, cost::CollectiveKind kind, cost::Bytes message,
                        bool in_place, const kernels::TimingOptions* options,
                        cost::CollectivePoint* point, std::string* error) {
  try {
    *point = measure_cpu_collective(*group, kind, message, in_place, *options);
    return true;
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "an unknown exception while timing an MPI collective";
  }
  return false;
}

}  // namespace
}  // namespace parasim::calib

extern "C" __attribute__((visibility("default"))) const ParasimPluginHeader* parasim_mpi_plugin() {
  static const ParasimMpiPlugin plugin{{parasim::calib::kMpiPluginAbi, PARASIM_VERSION},
                                       &parasim::calib::create_group,
                                       &parasim::calib::measure_collective};
  return &plugin.header;
}
