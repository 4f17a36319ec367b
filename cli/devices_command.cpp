// `parasim devices`: the GPUs this machine has, through the CUDA plugin (calibrate/cuda_plugin.hpp),
// or one line saying why there are none (exit code 3).
#include <fmt/format.h>

#include "calibrate/cuda_plugin.hpp"
#include "cli/commands.hpp"

namespace parasim::cli {

int run_devices(std::ostream& out) {
  const calib::GpuProbe gpus = calib::probe_gpus();
  const kernels::DeviceProbe& probe = gpus.probe;
  if (gpus.plugin.empty()) {
    out << "CUDA plugin: not loaded\n";
  } else {
    out << fmt::format("CUDA plugin: {} (CUDA runtime {}.{}", gpus.plugin,
                       probe.runtime_version / 1000, probe.runtime_version % 1000 / 10);
    if (probe.driver_version > 0) {
      out << fmt::format(", driver supports CUDA {}.{}", probe.driver_version / 1000,
                         probe.driver_version % 1000 / 10);
    } else {
      out << ", no NVIDIA driver loaded";
    }
    // ncclGetVersion: major*10000 + minor*100 + patch since NCCL 2.9.
    if (probe.nccl_version > 0) {
      out << fmt::format(", NCCL {}.{}.{}", probe.nccl_version / 10000,
                         probe.nccl_version / 100 % 100, probe.nccl_version % 100);
    }
    out << ")\n";
  }
  if (probe.devices.empty()) {
    out << "No GPUs visible: " << probe.reason << "\n"
        << "Simulation does not need a GPU; only measuring one (parasim calibrate) does.\n";
    return kExitNoDevice;
  }
  for (const auto& d : probe.devices) {
    out << fmt::format("  GPU {}: {} (sm_{}{}), {} SMs, {:.1f} GiB HBM, SM clock {:.0f} MHz\n",
                       d.index, d.name, d.compute_capability_major, d.compute_capability_minor,
                       d.sm_count, d.memory_bytes / (1024.0 * 1024 * 1024), d.sm_clock_khz / 1e3);
  }
  if (!probe.reason.empty()) out << probe.reason << "\n";
  return kExitOk;
}

}  // namespace parasim::cli
