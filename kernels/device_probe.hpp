#pragma once
// Device discovery and a smoke kernel. This header is plain C++ (no CUDA includes) and is the
// same whether or not parasim was built with CUDA; without CUDA the functions report why there
// is nothing to probe instead of failing. None of these functions throw.

#include <string>
#include <vector>

namespace parasim::kernels {

// One CUDA device as the runtime reports it.
struct DeviceInfo {
  int index = 0;                      // CUDA runtime device ordinal (after CUDA_VISIBLE_DEVICES)
  std::string name;                   // e.g. "NVIDIA H200"
  int compute_capability_major = 0;   // e.g. 9 for sm_90
  int compute_capability_minor = 0;   // e.g. 0 for sm_90
  int sm_count = 0;                   // streaming multiprocessors
  double memory_bytes = 0.0;          // total global memory, bytes
  double memory_clock_khz = 0.0;      // peak memory clock, kHz (0 when not reported)
  int memory_bus_width_bits = 0;      // global memory bus width, bits (0 when not reported)
  double sm_clock_khz = 0.0;          // peak SM clock, kHz (0 when not reported)
  int l2_cache_bytes = 0;             // L2 cache size, bytes
};

// What probe_devices() found. Invariant: when `devices` is empty, `reason` is non-empty.
// Versions use the CUDA encoding 1000*major + 10*minor (13000 = 13.0) and are 0 when unknown.
struct DeviceProbe {
  bool cuda_built = false;  // parasim was compiled with the CUDA kernels
  int runtime_version = 0;  // CUDA runtime parasim links against
  int driver_version = 0;   // highest CUDA version the loaded driver supports; 0 = no driver
  int nccl_version = 0;     // ncclGetVersion() code (22809 = 2.28.9); 0 without NCCL
  // cublasLtGetVersion(): cuBLAS's own encoding 10000*major + 100*minor + patch (130100 = 13.1.0,
  // cublas_api.h CUBLAS_VERSION), for calibration provenance; 0 without CUDA.
  int cublas_version = 0;
  std::vector<DeviceInfo> devices;
  // Why `devices` is empty, in plain words. With devices present it is empty unless some
  // device could not be queried (then it says which and why).
  std::string reason;
};

// Queries the CUDA runtime for every visible device. Never throws; with no usable device the
// result has no devices and a non-empty reason.
DeviceProbe probe_devices();

// True when parasim was compiled with the CUDA kernels (PARASIM_CUDA resolved to ON).
bool cuda_built();

// Outcome of run_smoke_kernel().
struct SmokeResult {
  bool ran = false;      // the kernel was launched and finished
  bool correct = false;  // every output element matched the host reference (only if ran)
  std::string detail;    // what happened: timing and sizes, or why it did not run / failed
};

// Runs one small real CUDA kernel (saxpy over 1M floats) on `device_index`, copies the result
// back and checks it on the host. Returns ran == false with the reason when there is no such
// device or CUDA was not built.
SmokeResult run_smoke_kernel(int device_index);

}  // namespace parasim::kernels
