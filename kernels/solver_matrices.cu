// Seeded SPD test stacks on the device (kernels/solver_matrices.cuh).
#include "kernels/solver_matrices.cuh"

#include <cmath>
#include <cstddef>
#include <vector>

#include "kernels/cuda_check.cuh"
#include "kernels/cuda_resources.cuh"
#include "kernels/seeded_values.cuh"
#include "kernels/solver_kernels.cuh"

namespace parasim::kernels::detail {

void make_spd_stack(const SolverContext& context, GpuDtype dtype, int block, int count,
                    double condition, std::uint64_t seed, void* out) {
  const std::size_t square = static_cast<std::size_t>(block) * static_cast<std::size_t>(block);
  const std::size_t elements = square * static_cast<std::size_t>(count);
  DeviceBuffer q(elements * sizeof(float));
  DeviceBuffer scaled(elements * sizeof(float));
  DeviceBuffer product(elements * sizeof(float));
  DeviceBuffer tau(static_cast<std::size_t>(block) * sizeof(float));
  DeviceBuffer info(sizeof(int));
  fill_seeded(q.get(), GpuDtype::kFp32, elements, seed, 0, context.stream);

  // Q_b from the QR of each uniform block, in place.
  int qr_work = 0;
  int q_work = 0;
  CUSOLVER_CHECK(
      cusolverDnSgeqrf_bufferSize(context.dense, block, block, q.as<float>(), block, &qr_work));
  CUSOLVER_CHECK(cusolverDnSorgqr_bufferSize(context.dense, block, block, block, q.as<float>(),
                                             block, tau.as<float>(), &q_work));
  const int work_floats = qr_work > q_work ? qr_work : q_work;
  DeviceBuffer work(static_cast<std::size_t>(work_floats) * sizeof(float));
  for (int b = 0; b < count; ++b) {
    float* matrix = q.as<float>() + square * static_cast<std::size_t>(b);
    CUSOLVER_CHECK(cusolverDnSgeqrf(context.dense, block, block, matrix, block, tau.as<float>(),
                                    work.as<float>(), work_floats, info.as<int>()));
    CUSOLVER_CHECK(cusolverDnSorgqr(context.dense, block, block, block, matrix, block,
                                    tau.as<float>(), work.as<float>(), work_floats,
                                    info.as<int>()));
  }

  // lambda_i = condition^(-i / (B - 1)), i = 0 .. B - 1 (largest 1).
  std::vector<float> lambda(static_cast<std::size_t>(block));
  for (int i = 0; i < block; ++i) {
    const double fraction = block == 1 ? 0.0 : static_cast<double>(i) / (block - 1);
    lambda[static_cast<std::size_t>(i)] = static_cast<float>(std::pow(condition, -fraction));
  }
  DeviceBuffer spectrum(lambda.size() * sizeof(float));
  CUDA_CHECK(cudaMemcpyAsync(spectrum.get(), lambda.data(), lambda.size() * sizeof(float),
                             cudaMemcpyHostToDevice, context.stream));

  // Q diag(lambda) Q^T, symmetrized, rounded to the storage type.
  scale_columns(context.stream, count, block, q.as<float>(), spectrum.as<float>(), 0, 1.0f,
                scaled.as<float>());
  const auto stride = static_cast<std::int64_t>(square);
  stack_gemm(context, GpuDtype::kFp32, GemmShape{block, block, block, false, true}, 1.0f,
             scaled.get(), stride, q.get(), stride, 0.0f, product.get(), stride, count);
  symmetrize(context.stream, GpuDtype::kFp32, count, block, product.get(), scaled.get());
  convert_from_float(context.stream, dtype, elements, scaled.as<float>(), out);
  CUDA_CHECK(cudaStreamSynchronize(context.stream));
}

}  // namespace parasim::kernels::detail
