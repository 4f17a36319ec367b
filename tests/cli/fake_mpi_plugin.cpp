// A libparasim_mpi.so "from another build" for tests/cli/plugins_test.cpp: its entry point
// returns a table with ABI 999 and another parasim version; the loader must refuse it before
// using anything in it (the function pointers are null).
#include "calibrate/mpi_plugin_abi.hpp"

extern "C" __attribute__((visibility("default"))) const ParasimPluginHeader* parasim_mpi_plugin() {
  static const ParasimMpiPlugin plugin{{999, "0.0.0-other"}, nullptr, nullptr};
  return &plugin.header;
}
