// run_smoke_kernel(): one saxpy over 1M floats, checked on the host (PARASIM_HAVE_CUDA only).
#include "kernels/device_probe.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace parasim::kernels {
namespace {

constexpr int kElements = 1 << 20;
constexpr int kThreadsPerBlock = 256;
constexpr float kScale = 2.0f;

// y[i] = a * x[i] + y[i]. With the inputs below every result is a small integer, so the device
// and host results are exactly equal.
__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int stride = static_cast<int>(gridDim.x * blockDim.x);
  for (int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += stride) {
    y[i] = a * x[i] + y[i];
  }
}

// Owns one cudaMalloc'd float array.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }
  cudaError_t allocate(std::size_t count) {
    return cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(float));
  }
  float* data() const { return data_; }

 private:
  float* data_ = nullptr;
};

// Owns one CUDA event.
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  cudaError_t create() { return cudaEventCreate(&event_); }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

SmokeResult not_run(std::string detail) { return SmokeResult{false, false, std::move(detail)}; }

std::string failed(const char* call, cudaError_t error) {
  return std::string{call} + " failed: " + cudaGetErrorName(error) + " (" +
         cudaGetErrorString(error) + ")";
}

}  // namespace

SmokeResult run_smoke_kernel(int device_index) {
  int count = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    return not_run("no CUDA device: " + failed("cudaGetDeviceCount", error));
  }
  if (device_index < 0 || device_index >= count) {
    return not_run("device " + std::to_string(device_index) + " does not exist (" +
                   std::to_string(count) + " CUDA devices)");
  }
  if (const cudaError_t error = cudaSetDevice(device_index); error != cudaSuccess) {
    return not_run(failed("cudaSetDevice", error));
  }

  std::vector<float> x(kElements);
  std::vector<float> y(kElements, 1.0f);
  for (int i = 0; i < kElements; ++i) x[i] = static_cast<float>(i % 1024);
  const std::size_t bytes = std::size_t{kElements} * sizeof(float);

  DeviceBuffer x_dev;
  DeviceBuffer y_dev;
  Event start;
  Event stop;
  cudaError_t error = x_dev.allocate(kElements);
  if (error == cudaSuccess) error = y_dev.allocate(kElements);
  if (error != cudaSuccess) return not_run(failed("cudaMalloc", error));
  error = start.create();
  if (error == cudaSuccess) error = stop.create();
  if (error != cudaSuccess) return not_run(failed("cudaEventCreate", error));
  error = cudaMemcpy(x_dev.data(), x.data(), bytes, cudaMemcpyHostToDevice);
  if (error == cudaSuccess) {
    error = cudaMemcpy(y_dev.data(), y.data(), bytes, cudaMemcpyHostToDevice);
  }
  if (error != cudaSuccess) return not_run(failed("cudaMemcpy to device", error));

  const int blocks = (kElements + kThreadsPerBlock - 1) / kThreadsPerBlock;
  cudaEventRecord(start.get());
  saxpy<<<blocks, kThreadsPerBlock>>>(kElements, kScale, x_dev.data(), y_dev.data());
  error = cudaGetLastError();
  if (error != cudaSuccess) return not_run(failed("saxpy launch", error));
  cudaEventRecord(stop.get());
  error = cudaEventSynchronize(stop.get());
  if (error != cudaSuccess) return not_run(failed("saxpy", error));
  float elapsed_ms = 0.0f;
  cudaEventElapsedTime(&elapsed_ms, start.get(), stop.get());

  std::vector<float> result(kElements);
  error = cudaMemcpy(result.data(), y_dev.data(), bytes, cudaMemcpyDeviceToHost);
  if (error != cudaSuccess) return not_run(failed("cudaMemcpy to host", error));

  int mismatches = 0;
  int first_bad = -1;
  for (int i = 0; i < kElements; ++i) {
    if (result[i] != kScale * x[i] + y[i]) {
      if (first_bad < 0) first_bad = i;
      ++mismatches;
    }
  }
  std::string detail = "saxpy over " + std::to_string(kElements) + " floats on device " +
                       std::to_string(device_index) + ": " + std::to_string(mismatches) +
                       " mismatches, kernel " + std::to_string(elapsed_ms) + " ms";
  if (first_bad >= 0) {
    detail += "; first at [" + std::to_string(first_bad) + "]: got " +
              std::to_string(result[first_bad]) + ", expected " +
              std::to_string(kScale * x[first_bad] + y[first_bad]);
  }
  return SmokeResult{true, mismatches == 0, std::move(detail)};
}

}  // namespace parasim::kernels
