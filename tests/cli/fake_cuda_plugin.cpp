// A libparasim_cuda.so from "another build" for tests/cli/plugins_test.cpp: its entry table
// says ABI 999, so the loader (calibrate/cuda_plugin.cpp) must refuse it before calling anything
// in it (the function pointers are null).
#include "calibrate/cuda_plugin_abi.hpp"

extern "C" __attribute__((visibility("default"))) const ParasimPluginHeader* parasim_cuda_plugin() {
  static const ParasimCudaPlugin plugin{{999, "0.0.0-other"}, nullptr, nullptr};
  return &plugin.header;
}
