#pragma once
// parasim::kernels internal: owners of CUDA resources (device memory, events, streams) and the
// L2 flush, so that a measurement that throws halfway frees what it allocated. Destructors never
// throw (their CUDA calls' errors are ignored: the first failure was already reported).

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "kernels/cuda_check.cuh"

namespace parasim::kernels::detail {

// cudaMalloc'd bytes (256-byte aligned, as cudaMalloc guarantees).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes > 0) CUDA_CHECK(cudaMalloc(&data_, bytes));
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_ != nullptr) cudaFree(data_);
  }

  void* get() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

class CudaEvent {
 public:
  CudaEvent() { CUDA_CHECK(cudaEventCreate(&event_)); }
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent() {
    if (event_ != nullptr) cudaEventDestroy(event_);
  }
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// A non-blocking stream (does not synchronise with the legacy default stream).
class CudaStream {
 public:
  CudaStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  ~CudaStream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// Seconds between two recorded events (cudaEventElapsedTime gives ms, ~0.5 us resolution:
// CUDA Runtime API, cudaEventElapsedTime). Waits for `stop`.
inline double elapsed_seconds(const CudaEvent& start, const CudaEvent& stop) {
  CUDA_CHECK(cudaEventSynchronize(stop.get()));
  float ms = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

// Overwrites a buffer of twice the current device's L2 size (cudaMemsetAsync), so that a timed
// kernel after it finds none of its operands in L2 (Triton's do_bench zeroes 256 MB for the same
// purpose: triton-lang/triton python/triton/testing.py).
class L2Flusher {
 public:
  L2Flusher() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    int l2_bytes = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    constexpr std::size_t kMinimumBytes = std::size_t{8} << 20;  // if L2 is reported as 0
    const std::size_t bytes = std::size_t{2} * static_cast<std::size_t>(l2_bytes);
    buffer_ = DeviceBuffer(bytes > kMinimumBytes ? bytes : kMinimumBytes);
  }
  void flush(cudaStream_t stream) {
    value_ ^= 1;  // alternate 0 and 1 bytes so that no write can be elided
    CUDA_CHECK(cudaMemsetAsync(buffer_.get(), value_, buffer_.bytes(), stream));
  }

 private:
  DeviceBuffer buffer_;
  int value_ = 0;
};

}  // namespace parasim::kernels::detail
