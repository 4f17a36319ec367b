#pragma once
// parasim::kernels internal: the data of the NCCL benchmark's correctness check
// (collective_bench.hpp). Rank r's input element at index i is
//     pattern(r, i) = r + (i mod kPatternPeriod)
// (small integers: sums over up to a few thousand ranks stay exact in fp32). Every expected
// output is then an affine function of its block and index,
//     expected(j) = base + block_step * (j / block) + multiplier * ((offset + j mod block) mod P)
// e.g. all-reduce: base n(n-1)/2, multiplier n; all-gather: block = count, block_step 1 (block j
// came from rank j). Both are computed on the device, so a check moves no data to the host.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace parasim::kernels::detail {

constexpr std::uint64_t kPatternPeriod = 251;  // prime: a misplaced block rarely matches

// What a correct output holds, as above.
struct ExpectedPattern {
  double base = 0;
  double block_step = 0;
  double multiplier = 1;
  std::size_t block = 1;   // elements per block (> 0)
  std::size_t offset = 0;  // added to the in-block index before the modulo
};

// dst[i] = owner + (i mod P) for i in [0, count).
void fill_pattern(float* dst, std::size_t count, int owner, cudaStream_t stream);
// dst[i] = value.
void fill_constant(float* dst, std::size_t count, float value, cudaStream_t stream);
// Elements of data[0, count) that differ from `expected` by more than 1e-5 relative (or are not
// finite); waits for `stream`. `counter` is one device-side unsigned long long of scratch.
unsigned long long count_mismatches(const float* data, std::size_t count,
                                    const ExpectedPattern& expected,
                                    unsigned long long* counter, cudaStream_t stream);

}  // namespace parasim::kernels::detail
