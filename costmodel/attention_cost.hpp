#pragma once
// parasim::cost attention cost — one FlashAttention kernel on one device.
//
// FlashAttention (Dao et al. 2022, arXiv 2205.14135; FlashAttention-2, arXiv 2307.08691) runs the
// attention core as one kernel each way, the scores staying on chip. Its time is taken from the
// device's measured efficiency table (KernelEfficiency::flash), not from GEMM bodies: the
// kernel's softmax, rescaling and (backward) recompute and atomics are what keep it below the
// GEMM ceiling, and the published benchmarks measure exactly this kernel.
//
//   flops(forward)  = 4 * heads * seq_q * seq_kv * head_dim * c,  c = 1/2 when causal, else 1
//   flops(backward) = 2.5 * flops(forward)
//   time(pass)      = flops(pass) / (peak(dtype) * flash.efficiency(pass, head_dim, seq_kv))
//
// The FLOP count is the one the FlashAttention papers and their benchmark use (FA2 section 4.1;
// Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py, flops(): 4 * batch * seqlen^2
// * nheads * headdim, halved for causal, backward 2.5x forward: five s x s x d products against
// two), so the measured efficiencies apply to it unchanged. `heads` counts batch x heads (the
// independent attention problems of the kernel). The table is looked up at the key length: the
// published sweeps vary the sequence at fixed tokens, and what grows with it is each query
// block's inner loop over keys, which amortizes the block's fixed work [inference]. Launch
// overhead is not included.

#include "costmodel/hardware.hpp"
#include "costmodel/kernel_efficiency.hpp"
#include "costmodel/units.hpp"
#include "sim/time.hpp"

namespace parasim::cost {

struct AttentionShape {
  double heads = 0;   // batch x heads (x buckets), independent problems
  double seq_q = 0;   // queries per problem
  double seq_kv = 0;  // keys per problem
  double head_dim = 0;
  bool causal = true;
  Dtype dtype = Dtype::kBf16;
};

// Throws std::invalid_argument unless heads, seq_q, seq_kv, head_dim > 0.
Flops flash_attention_flops(const AttentionShape& shape, FlashPass pass);

// Throws std::invalid_argument as flash_attention_flops, or when the device has no peak for the
// dtype.
sim::Time flash_attention_time(const AttentionShape& shape, FlashPass pass,
                               const DeviceSpec& device);

}  // namespace parasim::cost
