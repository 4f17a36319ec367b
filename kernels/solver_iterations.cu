// Newton-DB, coupled Newton, Chebyshev and the block scaling on a device stack
// (kernels/solver_iterations.cuh; the CPU originals are calibrate/inverse_root.cpp,
// calibrate/chebyshev.cpp and calibrate/power_iteration.cpp).
#include "kernels/solver_iterations.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>

#include "kernels/chebyshev_fit.hpp"
#include "kernels/cuda_check.cuh"
#include "kernels/seeded_values.cuh"
#include "kernels/solver_kernels.cuh"

namespace parasim::kernels::detail {
namespace {

// Workspace stacks per solver (named in the solvers below).
constexpr int kNewtonStacks = 5;         // X, Y, Z, T (= E), S
constexpr int kCoupledNewtonStacks = 5;  // M, X, M' (= its squares), M'^p, S
constexpr int kChebyshevStacks = 3;      // S, b_{k+1}, b_{k+2}

// calib::seeded_uniform_matrix(rows, cols, seed) with unit columns, rounded to fp32:
// std::mt19937_64 (output fixed by the C++ standard) drawn column by column, the top 53 bits of
// each draw scaled to [-1, 1).
std::vector<float> power_start_vectors(int rows, int cols, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<double> v(static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  for (double& x : v) {
    x = static_cast<double>(engine() >> 11) * (2.0 / 9007199254740992.0) - 1.0;
  }
  std::vector<float> out(v.size());
  for (int j = 0; j < cols; ++j) {
    const std::size_t first = static_cast<std::size_t>(j) * static_cast<std::size_t>(rows);
    double norm2 = 0.0;
    for (int i = 0; i < rows; ++i) norm2 += v[first + i] * v[first + i];
    const double inverse = norm2 > 0.0 ? 1.0 / std::sqrt(norm2) : 0.0;
    for (int i = 0; i < rows; ++i) out[first + i] = static_cast<float>(v[first + i] * inverse);
  }
  return out;
}

// A pool of equal device stacks handed out and back by pointer (the coupled Newton's powers).
class StackPool {
 public:
  explicit StackPool(const std::vector<DeviceBuffer>& stacks) {
    for (const DeviceBuffer& s : stacks) free_.push_back(s.get());
  }
  void* acquire() {
    if (free_.empty()) throw std::logic_error("solver workspace exhausted");
    void* p = free_.back();
    free_.pop_back();
    return p;
  }
  void release(void* p) { free_.push_back(p); }

 private:
  std::vector<void*> free_;
};

}  // namespace

BlockScaler::BlockScaler(const SolverContext& context, GpuDtype dtype, int block, int capacity)
    : dtype_(dtype), block_(block), chunks_(frobenius_chunks(block)) {
  const std::size_t column_elements = static_cast<std::size_t>(block) * kSolverPowerVectors;
  const std::size_t blocks = static_cast<std::size_t>(capacity);
  start_ = DeviceBuffer(blocks * column_elements * dtype_bytes(dtype));
  vectors_ = DeviceBuffer(blocks * column_elements * dtype_bytes(dtype));
  products_ = DeviceBuffer(blocks * column_elements * dtype_bytes(dtype));
  partials_ = DeviceBuffer(blocks * static_cast<std::size_t>(chunks_) * sizeof(float));
  estimate_ = DeviceBuffer(blocks * sizeof(float));
  scales_ = DeviceBuffer(blocks * sizeof(float));
  // One copy per block (rather than a zero GEMM stride), so every product is a plain strided
  // batch.
  const std::vector<float> start =
      power_start_vectors(block, kSolverPowerVectors, kSolverScalingSeed);
  std::vector<float> copies;
  copies.reserve(blocks * start.size());
  for (std::size_t b = 0; b < blocks; ++b) copies.insert(copies.end(), start.begin(), start.end());
  upload_as(context, dtype, copies.data(), copies.size(), start_.get());
}

const float* BlockScaler::compute(const SolverContext& context, const void* a, int count,
                                  GpuScaling scaling, float safety) {
  frobenius_partials(context.stream, dtype_, count, block_, a, partials_.as<float>());
  const bool power = scaling == GpuScaling::kPowerIteration;
  if (power) {
    CUDA_CHECK(cudaMemsetAsync(estimate_.get(), 0, static_cast<std::size_t>(count) * sizeof(float),
                               context.stream));
    const std::int64_t square = static_cast<std::int64_t>(block_) * block_;
    const std::int64_t columns = static_cast<std::int64_t>(block_) * kSolverPowerVectors;
    const GemmShape shape{block_, kSolverPowerVectors, block_, false, false};
    const void* v = start_.get();
    for (int step = 0; step < kSolverPowerSteps; ++step) {
      stack_gemm(context, dtype_, shape, 1.0f, a, square, v, columns, 0.0f, products_.get(),
                 columns, count);
      power_step(context.stream, dtype_, count, block_, kSolverPowerVectors, v, columns,
                 products_.get(), vectors_.get(), estimate_.as<float>());
      v = vectors_.get();
    }
  }
  finish_scales(context.stream, count, chunks_, partials_.as<float>(),
                power ? estimate_.as<float>() : nullptr, safety, scales_.as<float>());
  return scales_.as<float>();
}

IterativeRoot::IterativeRoot(const SolverContext& context, const SolverRequest& request,
                             int capacity)
    : request_(request),
      capacity_(capacity),
      scaler_(context, request.dtype, request.block, capacity),
      stack_bytes_(static_cast<std::size_t>(capacity) * static_cast<std::size_t>(request.block) *
                   static_cast<std::size_t>(request.block) * dtype_bytes(request.dtype)) {
  int stacks = 0;
  switch (request.solver) {
    case GpuSolver::kNewtonDB:
      stacks = kNewtonStacks;
      break;
    case GpuSolver::kCoupledNewton:
      stacks = kCoupledNewtonStacks;
      break;
    case GpuSolver::kChebyshev:
      stacks = kChebyshevStacks;
      coefficients_ = inverse_root_chebyshev_coefficients(request.p, request.iterations,
                                                          1.0 / request.condition_cap);
      break;
    case GpuSolver::kEigendecomposition:
      throw std::logic_error("IterativeRoot: EVD is not an iterative solver");
  }
  for (int i = 0; i < stacks; ++i) stacks_.emplace_back(stack_bytes_);
}

void IterativeRoot::solve(const SolverContext& context, const void* a, void* root, int count) {
  if (count < 1 || count > capacity_) throw std::logic_error("IterativeRoot: count out of range");
  const bool chebyshev_solver = request_.solver == GpuSolver::kChebyshev;
  const float safety =
      static_cast<float>(chebyshev_solver ? kSolverChebyshevSafety : kSolverNewtonSafety);
  const float* scales = scaler_.compute(context, a, count, request_.scaling, safety);
  switch (request_.solver) {
    case GpuSolver::kNewtonDB:
      newton_db(context, a, root, count, scales);
      return;
    case GpuSolver::kCoupledNewton:
      coupled_newton(context, a, root, count, scales);
      return;
    case GpuSolver::kChebyshev:
      chebyshev(context, a, root, count, scales);
      return;
    case GpuSolver::kEigendecomposition:
      break;
  }
}

// X = A / c; per run: Y_0 = X, Z_0 = I, E = (3I - Z Y) / 2, Y <- Y E, Z <- E Z, k updates with
// the first one's products Y_1 = X E, Z_1 = E; between runs X = sym(Y); root = c^(-1/p) Z.
void IterativeRoot::newton_db(const SolverContext& context, const void* a, void* root, int count,
                              const float* scales) {
  const GpuDtype dtype = request_.dtype;
  const int b = request_.block;
  void* x = stacks_[0].get();
  void* y = stacks_[1].get();
  void* z = stacks_[2].get();
  void* t = stacks_[3].get();
  void* s = stacks_[4].get();
  scale_add_identity(context.stream, dtype, count, b, a, x, BlockFactor{scales, 1.0f, -1.0f}, 0.0f);
  int runs = 0;  // p = 2^runs (checked by check_solver_request)
  while ((1 << runs) < request_.p) ++runs;
  for (int run = 0; run < runs; ++run) {
    // First update: Z_0 Y_0 = X, so E = (3I - X) / 2, Y_1 = X E, Z_1 = E.
    scale_add_identity(context.stream, dtype, count, b, x, t, BlockFactor{nullptr, -0.5f, 0.0f},
                       1.5f);
    square_gemm(context, dtype, b, x, t, y, count);
    std::swap(z, t);
    for (int update = 1; update < request_.iterations; ++update) {
      square_gemm(context, dtype, b, z, y, t, count);  // T = Z Y
      scale_add_identity(context.stream, dtype, count, b, t, t, BlockFactor{nullptr, -0.5f, 0.0f},
                         1.5f);                        // E = (3I - T) / 2
      square_gemm(context, dtype, b, y, t, s, count);  // Y E
      std::swap(y, s);
      square_gemm(context, dtype, b, t, z, s, count);  // E Z
      std::swap(z, s);
    }
    if (run + 1 < runs) symmetrize(context.stream, dtype, count, b, y, x);
  }
  const float exponent = -1.0f / static_cast<float>(request_.p);
  scale_add_identity(context.stream, dtype, count, b, z, root, BlockFactor{scales, 1.0f, exponent},
                     0.0f);
}

// alpha = -1/p, z = (p + 1) / (2c): M_0 = z A, X_0 = z^(1/p) I; per update
// M' = (1 - alpha) I + alpha M, X <- X M' (X_1 = z^(1/p) M'), M <- M'^p M (repeated squaring).
void IterativeRoot::coupled_newton(const SolverContext& context, const void* a, void* root,
                                   int count, const float* scales) {
  const GpuDtype dtype = request_.dtype;
  const int b = request_.block;
  const int p = request_.p;
  const float pf = static_cast<float>(p);
  const float alpha = -1.0f / pf;
  const float half_p1 = (pf + 1.0f) / 2.0f;
  StackPool pool(stacks_);
  void* m = pool.acquire();
  scale_add_identity(context.stream, dtype, count, b, a, m, BlockFactor{scales, half_p1, -1.0f},
                     0.0f);
  void* x = nullptr;
  for (int update = 0; update < request_.iterations; ++update) {
    void* mp = pool.acquire();
    scale_add_identity(context.stream, dtype, count, b, m, mp, BlockFactor{nullptr, alpha, 0.0f},
                       1.0f - alpha);
    if (update == 0) {
      // X_1 = z^(1/p) M' with z^(1/p) = ((p + 1) / 2)^(1/p) c^(-1/p).
      x = pool.acquire();
      scale_add_identity(context.stream, dtype, count, b, mp, x,
                         BlockFactor{scales, std::pow(half_p1, 1.0f / pf), -1.0f / pf}, 0.0f);
    } else {
      void* product = pool.acquire();
      square_gemm(context, dtype, b, x, mp, product, count);
      pool.release(x);
      x = product;
    }
    // power = M'^p from the bits of p, lowest first (calib's order).
    void* square = mp;
    void* power = nullptr;
    for (unsigned bits = static_cast<unsigned>(p);;) {
      if ((bits & 1U) != 0U) {
        if (power == nullptr) {
          power = square;
        } else {
          void* product = pool.acquire();
          square_gemm(context, dtype, b, power, square, product, count);
          pool.release(power);  // never `square`: a squaring always precedes this product
          power = product;
        }
      }
      bits >>= 1U;
      if (bits == 0U) break;
      void* squared = pool.acquire();
      square_gemm(context, dtype, b, square, square, squared, count);
      if (square != power) pool.release(square);
      square = squared;
    }
    void* next = pool.acquire();
    square_gemm(context, dtype, b, power, m, next, count);
    pool.release(m);
    m = next;
    if (square != power) pool.release(square);
    pool.release(power);
  }
  CUDA_CHECK(cudaMemcpyAsync(root, x, static_cast<std::size_t>(count) * b * b * dtype_bytes(dtype),
                             cudaMemcpyDeviceToDevice, context.stream));
}

// S = (2 A / c - (1 + lo) I) / (1 - lo), lo = 1 / condition_cap; Clenshaw b_k = 2 S b_{k+1} -
// b_{k+2} + c_k I from b_d = c_d I, b_{d-1} = 2 c_d S + c_{d-1} I; q = S b_1 - b_2 + c_0 I;
// root = c^(-1/p) q.
void IterativeRoot::chebyshev(const SolverContext& context, const void* a, void* root, int count,
                              const float* scales) {
  const GpuDtype dtype = request_.dtype;
  const int b = request_.block;
  const int degree = request_.iterations;
  const double lo = 1.0 / request_.condition_cap;
  const auto coefficient = [this](int k) {
    return static_cast<float>(coefficients_[static_cast<std::size_t>(k)]);
  };
  void* s = stacks_[0].get();
  void* b1 = stacks_[1].get();
  void* b2 = stacks_[2].get();
  scale_add_identity(context.stream, dtype, count, b, a, s,
                     BlockFactor{scales, static_cast<float>(2.0 / (1.0 - lo)), -1.0f},
                     static_cast<float>(-(1.0 + lo) / (1.0 - lo)));
  void* q = b1;
  if (degree == 1) {
    scale_add_identity(context.stream, dtype, count, b, s, q,
                       BlockFactor{nullptr, coefficient(1), 0.0f}, coefficient(0));
  } else {
    scale_add_identity(context.stream, dtype, count, b, nullptr, b2, BlockFactor{},
                       coefficient(degree));
    scale_add_identity(context.stream, dtype, count, b, s, b1,
                       BlockFactor{nullptr, 2.0f * coefficient(degree), 0.0f},
                       coefficient(degree - 1));
    for (int k = degree - 2; k >= 1; --k) {
      square_gemm(context, dtype, b, s, b1, b2, count, 2.0f, -1.0f);  // 2 S b1 - b2
      add_diagonal(context.stream, dtype, count, b, b2, coefficient(k));
      std::swap(b1, b2);
    }
    square_gemm(context, dtype, b, s, b1, b2, count, 1.0f, -1.0f);  // S b1 - b2
    add_diagonal(context.stream, dtype, count, b, b2, coefficient(0));
    q = b2;
  }
  const float exponent = -1.0f / static_cast<float>(request_.p);
  scale_add_identity(context.stream, dtype, count, b, q, root, BlockFactor{scales, 1.0f, exponent},
                     0.0f);
}

}  // namespace parasim::kernels::detail
