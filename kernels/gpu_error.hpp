#pragma once
// parasim::kernels GPU errors — what every GPU measurement throws when it cannot run.
//
// GpuUnavailable: there is nothing to measure on (parasim built without CUDA or NCCL, no driver,
// no device); the message is one line naming the reason, and `parasim calibrate --backend cuda`
// turns it into exit code 3. GpuError: a CUDA, cuBLAS, cuSOLVER or NCCL call failed; the message
// names the call, the error string and the file:line.

#include <stdexcept>
#include <string>

namespace parasim::kernels {

class GpuUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace parasim::kernels
