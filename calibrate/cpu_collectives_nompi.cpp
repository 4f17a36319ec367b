// CPU collectives without MPI (calibrate/cpu_collectives.hpp): nothing to measure.
#include <stdexcept>

#include "calibrate/cpu_collectives.hpp"

namespace parasim::calib {

cost::CollectivePoint measure_cpu_collective(const ProcessGroup& /*group*/,
                                             cost::CollectiveKind /*kind*/,
                                             cost::Bytes /*message*/, bool /*in_place*/,
                                             const kernels::TimingOptions& /*options*/) {
  throw std::runtime_error(
      "parasim was built without MPI, so the cpu backend cannot measure collectives (install "
      "libopenmpi-dev and rebuild)");
}

}  // namespace parasim::calib
