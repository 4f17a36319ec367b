// The entry point of libparasim_cuda.so (calibrate/cuda_plugin_abi.hpp); compiled only into the
// plugin, never into the executable.
#include <exception>
#include <string>

#include "calibrate/cuda_backend.hpp"
#include "calibrate/cuda_plugin_abi.hpp"
#include "kernels/device_probe.hpp"
#include "kernels/gpu_error.hpp"

namespace parasim::calib {
namespace {

void probe(kernels::DeviceProbe* out) {
  try {
    *out = kernels::probe_devices();
  } catch (const std::exception& e) {  // only an allocation can fail here
    out->devices.clear();
    out->reason = std::string("probing the CUDA devices failed: ") + e.what();
  }
}

CudaBackendStatus create(const ProcessGroup* group, MeasurementBackend** backend,
                         std::string* error) {
  try {
    *backend = new CudaBackend(*group);
    return CudaBackendStatus::kCreated;
  } catch (const kernels::GpuUnavailable& e) {
    *error = e.what();
    return CudaBackendStatus::kUnavailable;
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "an unknown exception while starting the cuda backend";
  }
  return CudaBackendStatus::kFailed;
}

}  // namespace
}  // namespace parasim::calib

extern "C" __attribute__((visibility("default"))) const ParasimPluginHeader* parasim_cuda_plugin() {
  static const ParasimCudaPlugin plugin{{parasim::calib::kCudaPluginAbi, PARASIM_VERSION},
                                        &parasim::calib::probe,
                                        &parasim::calib::create};
  return &plugin.header;
}
