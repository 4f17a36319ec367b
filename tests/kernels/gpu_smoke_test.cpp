// GPU smoke test: probes the devices and runs one real kernel on device 0.
// Exit codes: 0 = kernel ran and was correct, 1 = it failed, 77 = no CUDA device (CTest: Skipped).
#include <cstdio>

#include "kernels/device_probe.hpp"

namespace {
constexpr int kExitSkip = 77;
}  // namespace

int main() {
  namespace pk = parasim::kernels;
  const pk::DeviceProbe probe = pk::probe_devices();
  std::printf("cuda_built %d, CUDA runtime %d, driver %d, NCCL %d, %zu devices\n",
              probe.cuda_built ? 1 : 0, probe.runtime_version, probe.driver_version,
              probe.nccl_version, probe.devices.size());
  if (probe.devices.empty()) {
    std::printf("SKIP: no CUDA device: %s\n", probe.reason.c_str());
    return kExitSkip;
  }
  const pk::DeviceInfo& device = probe.devices.front();
  std::printf("device %d: %s (sm_%d%d, %d SMs, %.1f GiB, SM clock %.0f MHz)\n", device.index,
              device.name.c_str(), device.compute_capability_major,
              device.compute_capability_minor, device.sm_count,
              device.memory_bytes / (1024.0 * 1024.0 * 1024.0), device.sm_clock_khz / 1000.0);
  const pk::SmokeResult result = pk::run_smoke_kernel(device.index);
  std::printf("%s: %s\n", result.ran ? (result.correct ? "PASS" : "FAIL") : "FAIL (did not run)",
              result.detail.c_str());
  return result.ran && result.correct ? 0 : 1;
}
