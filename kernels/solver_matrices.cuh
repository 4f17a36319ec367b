#pragma once
// parasim::kernels internal: the SPD blocks measure_solver times, built on the device (not
// timed). Block b is Q_b diag(lambda) Q_b^T, symmetrized, with lambda geometric from 1 down to
// 1 / condition (calib::geometric_spectrum) and Q_b the orthogonal factor of the Householder QR
// (cusolverDnSgeqrf + cusolverDnSorgqr, fp32) of a B x B matrix of seeded_uniform(seed, 0,
// b B^2 + i) values (kernels/seeded_values.cuh): the construction of calib::spd_with_spectrum
// with a different random source, so the spectrum is exact up to fp32 rounding and the
// eigenvectors are those of a random orthogonal matrix.

#include <cstdint>

#include "kernels/gemm_bench.hpp"
#include "kernels/solver_context.cuh"

namespace parasim::kernels::detail {

// Writes `count` blocks of the request's storage type to `out` (count x B x B, column-major,
// equal to row-major as the blocks are symmetric). Waits for the stream before returning.
void make_spd_stack(const SolverContext& context, GpuDtype dtype, int block, int count,
                    double condition, std::uint64_t seed, void* out);

}  // namespace parasim::kernels::detail
