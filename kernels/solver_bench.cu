// measure_solver() and run_solver() with CUDA (contract in kernels/solver_bench.hpp): the whole
// stack, batched (one launch per step over N blocks) or block by block (N passes of one-block
// launches), on one stream with cuBLAS / cuSOLVER handles bound to it.
#include "kernels/solver_bench.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_resources.cuh"
#include "kernels/event_timing.cuh"
#include "kernels/request_checks.hpp"
#include "kernels/seeded_values.cuh"
#include "kernels/solver_context.cuh"
#include "kernels/solver_evd.cuh"
#include "kernels/solver_iterations.cuh"
#include "kernels/solver_matrices.cuh"

namespace parasim::kernels {
namespace {

using detail::DeviceBuffer;
using detail::SolverContext;

// Seed of measure_solver's blocks (any fixed value; documented so that runs are comparable).
constexpr std::uint64_t kSolverMatrixSeed = 0x5017'0b10'0c45ULL;

std::size_t stack_elements(const SolverRequest& request) {
  return static_cast<std::size_t>(request.batch) * static_cast<std::size_t>(request.block) *
         static_cast<std::size_t>(request.block);
}

// The request's solver over a whole stack, batched or block by block.
class StackSolver {
 public:
  StackSolver(const SolverContext& context, const SolverRequest& request) : request_(request) {
    const int capacity = request.batched ? request.batch : 1;
    if (request.solver == GpuSolver::kEigendecomposition) {
      evd_ = std::make_unique<detail::EvdRoot>(context, request, capacity);
    } else {
      iterative_ = std::make_unique<detail::IterativeRoot>(context, request, capacity);
    }
  }

  // Enqueues root = A^(-1/p) for every block of the stack.
  void run(const SolverContext& context, const void* a, void* root) {
    if (request_.batched) {
      solve(context, a, root, request_.batch);
      return;
    }
    const std::size_t block_bytes = static_cast<std::size_t>(request_.block) *
                                    static_cast<std::size_t>(request_.block) *
                                    detail::dtype_bytes(request_.dtype);
    for (int b = 0; b < request_.batch; ++b) {
      const std::size_t offset = block_bytes * static_cast<std::size_t>(b);
      solve(context, static_cast<const unsigned char*>(a) + offset,
            static_cast<unsigned char*>(root) + offset, 1);
    }
  }

  // Waits for the stream; throws GpuError if an eigensolve failed.
  void check(const SolverContext& context) const {
    if (evd_) {
      evd_->check(context);
    } else {
      CUDA_CHECK(cudaStreamSynchronize(context.stream));
    }
  }

 private:
  void solve(const SolverContext& context, const void* a, void* root, int count) {
    if (evd_) {
      evd_->solve(context, a, root, count);
    } else {
      iterative_->solve(context, a, root, count);
    }
  }

  SolverRequest request_;
  std::unique_ptr<detail::IterativeRoot> iterative_;
  std::unique_ptr<detail::EvdRoot> evd_;
};

}  // namespace

SolverMeasurement measure_solver(const SolverRequest& request, const TimingOptions& options,
                                 int device) {
  check_solver_request(request);
  detail::validate_timing(options);
  REQUIRE_DEVICE(device);
  detail::SolverHandles handles;
  const SolverContext context = handles.context();
  const std::size_t bytes = stack_elements(request) * detail::dtype_bytes(request.dtype);
  DeviceBuffer a(bytes);
  DeviceBuffer root(bytes);
  detail::make_spd_stack(context, request.dtype, request.block, request.batch, kSolverTestCondition,
                         kSolverMatrixSeed, a.get());
  StackSolver solver(context, request);
  for (int i = 0; i < options.warmup; ++i) solver.run(context, a.get(), root.get());
  std::optional<detail::L2Flusher> flusher;
  if (options.flush_l2) flusher.emplace();
  const std::vector<double> samples = detail::sample_event_times(
      context.stream, options.iterations,
      [&] {
        if (flusher) flusher->flush(context.stream);
      },
      [&] { solver.run(context, a.get(), root.get()); });
  solver.check(context);
  SolverMeasurement measurement;
  measurement.time = summarize(samples);
  measurement.matmuls = solver_matmuls(request);
  return measurement;
}

std::vector<double> run_solver(const SolverRequest& request, const std::vector<double>& blocks,
                               int device) {
  check_solver_request(request);
  const std::size_t n = stack_elements(request);
  if (blocks.size() != n) {
    throw std::invalid_argument("run_solver: expected N B B = " + std::to_string(n) +
                                " values, got " + std::to_string(blocks.size()));
  }
  REQUIRE_DEVICE(device);
  detail::SolverHandles handles;
  const SolverContext context = handles.context();

  // Row-major host blocks to column-major device blocks (a transpose per block), and back.
  const auto b = static_cast<std::size_t>(request.block);
  const auto transpose = [b](std::size_t index) {
    const std::size_t square = b * b;
    const std::size_t within = index % square;
    return index - within + (within % b) * b + within / b;
  };
  std::vector<float> host(n);
  for (std::size_t i = 0; i < n; ++i) host[transpose(i)] = static_cast<float>(blocks[i]);

  const std::size_t bytes = n * detail::dtype_bytes(request.dtype);
  DeviceBuffer a(bytes);
  DeviceBuffer root(bytes);
  detail::upload_as(context, request.dtype, host.data(), n, a.get());
  StackSolver solver(context, request);
  solver.run(context, a.get(), root.get());
  solver.check(context);
  detail::download_as(context, request.dtype, root.get(), n, host.data());

  std::vector<double> roots(n);
  for (std::size_t i = 0; i < n; ++i) roots[i] = static_cast<double>(host[transpose(i)]);
  return roots;
}

}  // namespace parasim::kernels
