#pragma once
// parasim::calib the CUDA plugin from the executable's side: loads libparasim_cuda.so
// (plugin_library.hpp says where from; cuda_plugin_abi.hpp is its entry point) the first time
// one of these functions is called, and only then, so that no other command maps a CUDA library.
//
// Every way of having no GPU to use gives one line saying why, and exit code 3 in the commands:
// parasim built without CUDA, the plugin not found, the plugin found but not loadable (dlopen's
// message, e.g. a CUDA library it needs is not installed), a plugin from another build (ABI or
// version), no driver, no device.

#include <memory>
#include <string>

#include "calibrate/backend.hpp"
#include "calibrate/process_group.hpp"
#include "kernels/device_probe.hpp"

namespace parasim::calib {

struct GpuProbe {
  std::string plugin;         // the plugin file that was loaded; empty when none could be
  kernels::DeviceProbe probe; // no devices and a reason when the plugin could not be loaded
};

// The GPUs of this machine as the plugin sees them. Never throws.
GpuProbe probe_gpus();

// The cuda backend over `group` (collective: every rank calls it). Throws
// kernels::GpuUnavailable (one line) when there is no GPU to use on some rank, for any of the
// reasons above, and std::runtime_error when the backend fails to start otherwise.
std::unique_ptr<MeasurementBackend> make_cuda_backend(const ProcessGroup& group);

}  // namespace parasim::calib
