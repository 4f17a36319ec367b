// The CUDA-less build of kernels/device_probe.hpp: nothing to probe, and it says why.
// PARASIM_NO_CUDA_REASON comes from cmake/ParasimCuda.cmake via kernels/CMakeLists.txt.
#include "kernels/device_probe.hpp"

namespace parasim::kernels {

bool cuda_built() { return false; }

DeviceProbe probe_devices() {
  DeviceProbe probe;
  probe.reason = PARASIM_NO_CUDA_REASON;
  return probe;
}

SmokeResult run_smoke_kernel(int /*device_index*/) {
  return SmokeResult{false, false, PARASIM_NO_CUDA_REASON};
}

}  // namespace parasim::kernels
