#pragma once
// parasim::cost EagerIssue — wall time of kernels issued one at a time by an eager host loop.
//
// An eager framework (PyTorch without CUDA graphs or compilation) runs Python for every
// operation: the interpreter, the dispatcher, the allocator and then the CUDA launch. The host
// therefore issues op i no earlier than i x host_per_op after it started, and the GPU runs op i
// no earlier than it was issued:
//
//   host_i = host_{i-1} + host_per_op              (the host issues the next op)
//   gpu_i  = max(gpu_{i-1}, host_i) + body_i       (the GPU runs it once issued and free)
//
// A sync (a tensor read back on the host, `if error < tol`, `.item()`) issues one more op (the
// device-to-host copy, body ~0) and then blocks the host until the GPU is done:
//
//   host = max(host, gpu)                          (the GPU queue is drained; it idles while the
//                                                   host issues the next op)
//
// elapsed() = max(host, gpu). When bodies are long the GPU bounds the time (sum of bodies plus
// the first issue); when they are short the host does (ops x host_per_op); syncs stop the host
// from running ahead and so expose both.
//
// Preconditions: host costs and bodies are >= 0 (asserted). Invariants under them: elapsed()
// never decreases, and it is at least both the summed host costs and the summed bodies.
//
// Units: sim::Time. host_per_op is the whole host cost of one op, launch included.

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>

#include "sim/time.hpp"

namespace parasim::cost {

class EagerIssue {
 public:
  explicit EagerIssue(sim::Time host_per_op) : host_per_op_(host_per_op) {
    assert(host_per_op >= sim::Time::zero());
  }

  // One op whose kernel runs `body` on the GPU (no launch overhead in it).
  void op(sim::Time body) { op(body, host_per_op_); }
  // One op with its own host cost (for example the further launches of one foreach call).
  void op(sim::Time body, sim::Time host) {
    assert(body >= sim::Time::zero() && host >= sim::Time::zero());
    host_ += host;
    gpu_ = std::max(gpu_, host_) + body;
    ++op_count_;
  }
  // `count` ops of `body` each.
  void repeat(sim::Time body, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) op(body);
  }
  // A sequence of `ops` ops timed as a whole on the GPU (`body`, e.g. a measured solver run)
  // containing `syncs` read-backs: the host issues all of them, the GPU starts after the first
  // issue, and the host's waits inside are approximated by one wait for the GPU at the end.
  void sequence(sim::Time body, std::int64_t ops, std::int64_t syncs) {
    assert(body >= sim::Time::zero() && ops >= 1 && syncs >= 0);
    const sim::Time first_issued = host_ + host_per_op_;
    host_ += host_per_op_ * ops;
    gpu_ = std::max(gpu_, first_issued) + body;
    op_count_ += ops;
    if (syncs > 0) host_ = std::max(host_, gpu_);
    sync_count_ += syncs;
  }
  // A value read back on the host: one copy op, then the host waits for the GPU.
  void sync() {
    op(sim::Time::zero());
    host_ = std::max(host_, gpu_);
    ++sync_count_;
  }

  sim::Time elapsed() const { return std::max(host_, gpu_); }
  std::int64_t op_count() const { return op_count_; }
  std::int64_t sync_count() const { return sync_count_; }

 private:
  sim::Time host_per_op_;
  sim::Time host_;
  sim::Time gpu_;
  std::int64_t op_count_ = 0;
  std::int64_t sync_count_ = 0;
};

// Kernel launches of one torch._foreach_* call over `tensors` tensors of `elements` elements in
// all (PyTorch aten/src/ATen/native/cuda/MultiTensorApply.cuh): tensors are cut into chunks of
// kForeachChunkElements, one launch covers at most kForeachChunksPerLaunch chunks and, for three
// tensor lists (depth 3), kForeachTensorsPerLaunch tensors. The Python call costs the host once;
// every further launch costs it only the launch.
inline constexpr std::int64_t kForeachChunkElements = 65536;
inline constexpr std::int64_t kForeachChunksPerLaunch = 320;
inline constexpr std::int64_t kForeachTensorsPerLaunch = 48;
inline std::int64_t foreach_launches(std::int64_t tensors, double elements) {
  const auto by_tensors = (tensors + kForeachTensorsPerLaunch - 1) / kForeachTensorsPerLaunch;
  const auto by_chunks = std::llround(std::ceil(
      elements / static_cast<double>(kForeachChunkElements * kForeachChunksPerLaunch)));
  return std::max<std::int64_t>({1, by_tensors, by_chunks});
}

}  // namespace parasim::cost
