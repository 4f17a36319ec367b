#pragma once
// parasim::cost kernel efficiency — what fraction of its datasheet peaks a device's kernels reach,
// as published measurements say. Part of DeviceSpec (hardware.hpp): a preset carries measured
// values with their sources (cluster_presets.cpp); a device written out in a scenario starts from
// conservative_kernel_efficiency() and the CostModel warns once that it is uncalibrated.
//
// Fields (all fractions are of the datasheet dense peak or HBM bandwidth of the same DeviceSpec):
//   gemm_ceiling_*   large-GEMM efficiency per dtype, SUSTAINED: what a training step sees with
//                    the GPU at its power limit, not a cold burst (B200 MSMF 1456.3 vs MAMF 1770.9
//                    TFLOP/s, stas00/ml-engineering fast-mamf, is the difference). The roofline
//                    multiplies it by tile, wave and small-K factors (compute_cost.hpp).
//   gemm_k_half      the small-K constant of that roofline, r(k) = k / (k + k_half).
//   min_gemm_body    the shortest GEMM kernel body (GPU time, launch excluded): even a tiny GEMM
//                    pays its prologue, pipeline fill and epilogue. gemm_time >= this.
//   memory_streaming achievable fraction of HBM bandwidth of streaming kernels (STREAM-like
//                    copy / scale / add / triad), used for every memory-bound kernel: the
//                    framework's unfused kernels are charged their extra passes explicitly
//                    (strategies/layers/attention_core.hpp), not a lower bandwidth.
//   flash            FlashAttention's achieved fraction of the 16-bit peak by head dimension and
//                    sequence length, causal, forward and backward (FLOPs counted as the
//                    FlashAttention papers count them, attention_cost.hpp).
//   calibrated       true when the values come from measurements (a preset, or a scenario or
//                    profile that sets them); false: conservative defaults, warned about.
//
// Invariants (validate): every fraction in (0, 1]; k_half >= 0; min_gemm_body >= 0; the
// FlashAttention table non-empty, its axes strictly increasing and positive, its two grids
// head_dims x seq_lens in size.

#include <string>
#include <vector>

#include "sim/time.hpp"

namespace parasim::cost {

enum class Dtype;  // hardware.hpp

enum class FlashPass { kForward, kBackward };

// Efficiency over a grid of head dimensions (rows) and sequence lengths (columns), row-major:
// forward[i * seq_lens.size() + j] is at head_dims[i], seq_lens[j].
struct FlashAttentionTable {
  std::vector<double> head_dims;
  std::vector<double> seq_lens;
  std::vector<double> forward;
  std::vector<double> backward;

  // Bilinear interpolation in (ln head_dim, ln seq_len) between the grid's points; outside the
  // grid the nearest edge value (no extrapolation: a table measured from 512 to 16k says nothing
  // about 128 or 1M). A single row or column is constant along that axis.
  double efficiency(FlashPass pass, double head_dim, double seq_len) const;

  bool operator==(const FlashAttentionTable&) const = default;
};

struct KernelEfficiency {
  double gemm_ceiling_bf16 = 0;
  double gemm_ceiling_fp16 = 0;
  double gemm_ceiling_tf32 = 0;
  double gemm_ceiling_fp32 = 0;
  double gemm_ceiling_fp8 = 0;
  double gemm_k_half = 0;
  sim::Time min_gemm_body;
  double memory_streaming = 0;
  FlashAttentionTable flash;
  bool calibrated = false;

  double gemm_ceiling(Dtype dtype) const;

  bool operator==(const KernelEfficiency&) const = default;
};

// Where each field of a preset's KernelEfficiency comes from (one text per field; none empty).
struct KernelEfficiencySources {
  std::string gemm_ceiling_bf16, gemm_ceiling_fp16, gemm_ceiling_tf32, gemm_ceiling_fp32,
      gemm_ceiling_fp8, gemm_k_half, min_gemm_body, memory_streaming, flash;
};

// The values for a device without measurements (research report "conservative default"): the
// lowest sustained NVIDIA figures (B200 MSMF 0.647 bf16, 0.621 fp8), B200's small-K fit, the
// lowest measured STREAM fraction (MI300X), FlashAttention 0.25 at s <= 1k and 0.35 at s >= 4k
// (d = 128), a 5 us GEMM floor. calibrated = false. Sources in kernel_efficiency.cpp.
KernelEfficiency conservative_kernel_efficiency();

// One line naming the conservative values, for the uncalibrated-device warning.
std::string describe_conservative(const KernelEfficiency& kernels);

// Throws std::invalid_argument naming the first field out of range.
void validate(const KernelEfficiency& kernels);

}  // namespace parasim::cost
