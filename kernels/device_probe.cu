// probe_devices() with the CUDA runtime (built only when PARASIM_HAVE_CUDA).
#include "kernels/device_probe.hpp"

#include <cublasLt.h>
#include <cuda_runtime.h>

#if PARASIM_HAVE_NCCL
#include <nccl.h>
#endif

#include <string>
#include <utility>

namespace parasim::kernels {
namespace {

std::string error_text(cudaError_t error) {
  return std::string{cudaGetErrorName(error)} + ": " + cudaGetErrorString(error);
}

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Plain-words explanation of a failed cudaGetDeviceCount().
std::string no_device_reason(cudaError_t error, int driver_version, int runtime_version) {
  if (error == cudaErrorInsufficientDriver) {
    if (driver_version == 0) {
      return "no NVIDIA driver is loaded (cudaGetDeviceCount: cudaErrorInsufficientDriver)";
    }
    return "the NVIDIA driver supports CUDA " + version_text(driver_version) +
           " but parasim's CUDA runtime is " + version_text(runtime_version) +
           "; update the driver (cudaGetDeviceCount: cudaErrorInsufficientDriver)";
  }
  if (error == cudaErrorNoDevice) {
    return "the driver reports 0 CUDA devices (cudaErrorNoDevice; check CUDA_VISIBLE_DEVICES)";
  }
  return "cudaGetDeviceCount failed (" + error_text(error) + ")";
}

// One integer device attribute, 0 when the runtime does not report it.
int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  if (cudaDeviceGetAttribute(&value, attr, device) != cudaSuccess) {
    return 0;
  }
  return value;
}

}  // namespace

bool cuda_built() { return true; }

DeviceProbe probe_devices() {
  DeviceProbe probe;
  probe.cuda_built = true;
  // Both calls work without a driver: the runtime version is compiled in, the driver's is 0.
  if (cudaRuntimeGetVersion(&probe.runtime_version) != cudaSuccess) {
    probe.runtime_version = 0;
  }
  if (cudaDriverGetVersion(&probe.driver_version) != cudaSuccess) {
    probe.driver_version = 0;
  }
  // A library query: works without a driver or device.
  probe.cublas_version = static_cast<int>(cublasLtGetVersion());
#if PARASIM_HAVE_NCCL
  if (ncclGetVersion(&probe.nccl_version) != ncclSuccess) {
    probe.nccl_version = 0;
  }
#endif

  int count = 0;
  const cudaError_t count_error = cudaGetDeviceCount(&count);
  if (count_error != cudaSuccess || count <= 0) {
    probe.reason = no_device_reason(count_error == cudaSuccess ? cudaErrorNoDevice : count_error,
                                    probe.driver_version, probe.runtime_version);
    return probe;
  }

  for (int device = 0; device < count; ++device) {
    cudaDeviceProp prop{};
    const cudaError_t error = cudaGetDeviceProperties(&prop, device);
    if (error != cudaSuccess) {
      if (!probe.reason.empty()) probe.reason += "; ";
      probe.reason += "device " + std::to_string(device) + " could not be queried (" +
                      error_text(error) + ")";
      continue;
    }
    DeviceInfo info;
    info.index = device;
    info.name = prop.name;
    info.compute_capability_major = prop.major;
    info.compute_capability_minor = prop.minor;
    info.sm_count = prop.multiProcessorCount;
    info.memory_bytes = static_cast<double>(prop.totalGlobalMem);
    info.l2_cache_bytes = prop.l2CacheSize;
    // cudaDeviceProp::clockRate and ::memoryClockRate are gone in CUDA 13; use the attributes.
    info.sm_clock_khz = attribute(cudaDevAttrClockRate, device);
    info.memory_clock_khz = attribute(cudaDevAttrMemoryClockRate, device);
    info.memory_bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
    probe.devices.push_back(std::move(info));
  }
  return probe;
}

}  // namespace parasim::kernels
