#include "calibrate/cuda_plugin.hpp"

#include <stdexcept>
#include <string>

#include "calibrate/cuda_plugin_abi.hpp"
#include "calibrate/plugin_library.hpp"
#include "kernels/gpu_error.hpp"

namespace parasim::calib {
namespace {

struct CudaPlugin {
  const ParasimCudaPlugin* table = nullptr;  // null when it could not be loaded
  std::string path;
  std::string error;
};

CudaPlugin load() {
  CudaPlugin plugin;
#if PARASIM_HAVE_CUDA
  const LoadedPlugin loaded =
      load_plugin(kCudaPluginFile, kCudaPluginEntry, "the CUDA plugin", false);
  plugin.path = loaded.path;
  if (loaded.outcome != LoadedPlugin::Outcome::kLoaded) {
    plugin.error = loaded.error;
    if (loaded.outcome == LoadedPlugin::Outcome::kNotLoadable) {
      plugin.error += "; it needs the CUDA runtime, cuBLAS, cuSOLVER and NCCL libraries it was "
                      "built with on the loader path";
    }
    return plugin;
  }
  const ParasimPluginHeader* header =
      plugin_table(loaded, kCudaPluginAbi, "the CUDA plugin", &plugin.error);
  if (header == nullptr) return plugin;
  // The header is the table's first member (standard layout).
  const auto* table = reinterpret_cast<const ParasimCudaPlugin*>(header);
  plugin.table = table;
#else
  plugin.error = PARASIM_NO_CUDA_REASON;
#endif
  return plugin;
}

// Loaded once per process, on first use.
const CudaPlugin& plugin() {
  static const CudaPlugin loaded = load();
  return loaded;
}

}  // namespace

GpuProbe probe_gpus() {
  GpuProbe result;
  const CudaPlugin& p = plugin();
  if (p.table == nullptr) {
    result.probe.reason = p.error;
    return result;
  }
  result.plugin = p.path;
  p.table->probe_devices(&result.probe);
  return result;
}

std::unique_ptr<MeasurementBackend> make_cuda_backend(const ProcessGroup& group) {
  const CudaPlugin& p = plugin();
  // Every rank must agree before the backend's own collectives start.
  if (!group.all(p.table != nullptr)) {
    throw kernels::GpuUnavailable(p.table == nullptr ? p.error
                                                     : "another rank cannot load the CUDA plugin");
  }
  MeasurementBackend* backend = nullptr;
  std::string error;
  switch (p.table->create_backend(&group, &backend, &error)) {
    case CudaBackendStatus::kCreated: return std::unique_ptr<MeasurementBackend>(backend);
    case CudaBackendStatus::kUnavailable: throw kernels::GpuUnavailable(error);
    case CudaBackendStatus::kFailed: break;
  }
  throw std::runtime_error(error);
}

}  // namespace parasim::calib
