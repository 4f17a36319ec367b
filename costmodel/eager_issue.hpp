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
// from running ahead and so expose both. Invariant: elapsed() is non-decreasing and at least
// both ops() x host_per_op and the sum of the bodies.
//
// Units: sim::Time. host_per_op is the whole host cost of one op, launch included.

#include <algorithm>
#include <cstdint>

#include "sim/time.hpp"

namespace parasim::cost {

class EagerIssue {
 public:
  explicit EagerIssue(sim::Time host_per_op) : host_per_op_(host_per_op) {}

  // One op whose kernel runs `body` on the GPU (no launch overhead in it).
  void op(sim::Time body) {
    host_ += host_per_op_;
    gpu_ = std::max(gpu_, host_) + body;
    ++ops_;
  }
  // `count` ops of `body` each.
  void ops(sim::Time body, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) op(body);
  }
  // A value read back on the host: one copy op, then the host waits for the GPU.
  void sync() {
    op(sim::Time::zero());
    host_ = std::max(host_, gpu_);
    ++syncs_;
  }

  sim::Time elapsed() const { return std::max(host_, gpu_); }
  std::int64_t ops() const { return ops_; }
  std::int64_t syncs() const { return syncs_; }

 private:
  sim::Time host_per_op_;
  sim::Time host_;
  sim::Time gpu_;
  std::int64_t ops_ = 0;
  std::int64_t syncs_ = 0;
};

}  // namespace parasim::cost
