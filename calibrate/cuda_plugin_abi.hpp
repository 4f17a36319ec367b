#pragma once
// The entry point of libparasim_cuda.so, the CUDA measurement backend that parasim loads with
// dlopen (plugin_library.hpp) only for `devices` and `calibrate --backend cuda`.
//
// The plugin exports one unmangled function, parasim_cuda_plugin(), returning a table of function
// pointers that starts with a ParasimPluginHeader (plugin_library.hpp): the loader checks its ABI
// number and parasim version before it touches the rest, and refuses a plugin from another build. The
// table passes C++ objects (kernels::DeviceProbe, calib::MeasurementBackend, calib::ProcessGroup,
// std::string), so plugin and executable must come from the same build: bump kCudaPluginAbi when
// this table or any of those types changes. Exceptions never cross the table's functions;
// a MeasurementBackend's own member functions throw as documented in backend.hpp.

#include <string>

#include "calibrate/plugin_library.hpp"

namespace parasim::kernels {
struct DeviceProbe;
}
namespace parasim::calib {
class MeasurementBackend;
class ProcessGroup;

inline constexpr int kCudaPluginAbi = 1;
inline constexpr const char* kCudaPluginEntry = "parasim_cuda_plugin";
inline constexpr const char* kCudaPluginFile = "libparasim_cuda.so";

// What create_backend returned.
enum class CudaBackendStatus : int {
  kCreated = 0,      // *backend is set; the caller owns it (delete through the base class)
  kUnavailable = 1,  // no usable device (kernels::GpuUnavailable): *error says why, one line
  kFailed = 2,       // anything else went wrong: *error holds the message
};

}  // namespace parasim::calib

extern "C" {

struct ParasimCudaPlugin {
  ParasimPluginHeader header;  // {kCudaPluginAbi, PARASIM_VERSION} of the build that made it
  // kernels::probe_devices() (never throws).
  void (*probe_devices)(parasim::kernels::DeviceProbe* probe);
  // A calib::CudaBackend (cuda_backend.hpp) over `group`, which must outlive it. Collective:
  // every rank of `group` calls it.
  parasim::calib::CudaBackendStatus (*create_backend)(const parasim::calib::ProcessGroup* group,
                                                      parasim::calib::MeasurementBackend** backend,
                                                      std::string* error);
};

// The plugin's one exported symbol (kCudaPluginEntry): the table above, as its header.
const ParasimPluginHeader* parasim_cuda_plugin(void);
}
