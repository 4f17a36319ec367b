// Host-side checks of kernels/device_probe.hpp; pass with or without CUDA and with or without a
// GPU. PARASIM_EXPECT_CUDA_BUILT comes from tests/kernels/CMakeLists.txt.
#include <doctest/doctest.h>

#include "kernels/device_probe.hpp"

namespace pk = parasim::kernels;

TEST_CASE("probe_devices never throws and explains an empty device list") {
  pk::DeviceProbe probe;
  CHECK_NOTHROW(probe = pk::probe_devices());
  if (probe.devices.empty()) {
    CHECK_FALSE(probe.reason.empty());
  }
  CHECK(probe.cuda_built == pk::cuda_built());
  for (const pk::DeviceInfo& device : probe.devices) {
    CHECK_FALSE(device.name.empty());
    CHECK(device.sm_count > 0);
    CHECK(device.memory_bytes > 0.0);
  }
}

TEST_CASE("cuda_built matches the build configuration") {
  CHECK(pk::cuda_built() == static_cast<bool>(PARASIM_EXPECT_CUDA_BUILT));
}

TEST_CASE("without CUDA nothing is probed and the smoke kernel does not run") {
  if (pk::cuda_built()) return;
  const pk::DeviceProbe probe = pk::probe_devices();
  CHECK(probe.devices.empty());
  CHECK(probe.runtime_version == 0);
  CHECK(probe.driver_version == 0);
  CHECK(probe.nccl_version == 0);
  CHECK(probe.reason.find("built without CUDA") != std::string::npos);
  const pk::SmokeResult smoke = pk::run_smoke_kernel(0);
  CHECK_FALSE(smoke.ran);
  CHECK_FALSE(smoke.correct);
  CHECK(smoke.detail == probe.reason);
}

TEST_CASE("the smoke kernel refuses a device index that does not exist") {
  const pk::SmokeResult smoke = pk::run_smoke_kernel(-1);
  CHECK_FALSE(smoke.ran);
  CHECK_FALSE(smoke.detail.empty());
}
