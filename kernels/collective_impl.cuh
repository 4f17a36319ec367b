#pragma once
// parasim::kernels internal: NcclCommunicator's state, shared by collective_bench.cu (the
// communicator and measure()) and collective_overlap.cu (measure_overlap()). Only built with
// NCCL (PARASIM_HAVE_NCCL).

#include <cuda_runtime.h>
#include <nccl.h>

#include "kernels/collective_bench.hpp"
#include "kernels/cuda_check.cuh"
#include "kernels/cuda_resources.cuh"

namespace parasim::kernels {

struct NcclCommunicator::Impl {
  // The device must be current (the stream is created on it).
  Impl(int rank, int world, int device) : rank_(rank), world_(world), device_(device) {}
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    if (comm_ != nullptr) {
      cudaSetDevice(device_);
      cudaStreamSynchronize(stream_.get());
      ncclCommDestroy(comm_);
    }
  }

  // Makes the communicator's device current (the caller's thread may have switched).
  void activate() const { CUDA_CHECK(cudaSetDevice(device_)); }

  // Throws GpuError when NCCL reports an asynchronous error (a failed remote rank, a network
  // error) after the work so far.
  void check_async() const {
    ncclResult_t async = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(comm_, &async));
    detail::check_nccl(async, "ncclCommGetAsyncError (an earlier operation)", __FILE__, __LINE__);
  }

  int rank_;
  int world_;
  int device_;
  detail::CudaStream stream_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace parasim::kernels
