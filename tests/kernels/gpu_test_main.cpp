// Main of every GPU test executable (tests/kernels/gpu_*_test.cpp): skips with exit code 77
// (CTest "Skipped") when there is no usable CUDA device, and runs the doctest cases otherwise.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "kernels/device_probe.hpp"

namespace {
constexpr int kExitSkip = 77;
}  // namespace

int main(int argc, char** argv) {
  const parasim::kernels::DeviceProbe probe = parasim::kernels::probe_devices();
  if (probe.devices.empty()) {
    std::printf("SKIP: no CUDA device: %s\n", probe.reason.c_str());
    return kExitSkip;
  }
  std::printf("GPU tests on device 0: %s\n", probe.devices.front().name.c_str());
  doctest::Context context(argc, argv);
  return context.run();
}
