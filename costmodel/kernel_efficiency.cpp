#include "costmodel/kernel_efficiency.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "costmodel/hardware.hpp"
#include "costmodel/units.hpp"

namespace parasim::cost {
namespace {

// The bracketing grid index i (axis[i] <= x <= axis[i + 1]) and the weight of axis[i + 1] in
// ln space; values outside the axis clamp to its ends (weight 0 or 1).
std::pair<std::size_t, double> bracket(const std::vector<double>& axis, double x) {
  if (axis.size() == 1 || x <= axis.front()) return {0, 0.0};
  if (x >= axis.back()) return {axis.size() - 2, 1.0};
  const auto upper = std::upper_bound(axis.begin(), axis.end(), x);
  const std::size_t i = static_cast<std::size_t>(upper - axis.begin()) - 1;
  const double w = (std::log(x) - std::log(axis[i])) / (std::log(axis[i + 1]) - std::log(axis[i]));
  return {i, w};
}

void check_fraction(double v, const char* name) {
  if (!(v > 0.0 && v <= 1.0)) {
    throw std::invalid_argument(
        fmt::format("kernel efficiency: {} must be in (0, 1], got {}", name, v));
  }
}

void check_axis(const std::vector<double>& axis, const char* name) {
  if (axis.empty()) {
    throw std::invalid_argument(fmt::format("kernel efficiency: flash.{} is empty", name));
  }
  for (std::size_t i = 0; i < axis.size(); ++i) {
    if (!(axis[i] > 0.0) || (i > 0 && !(axis[i] > axis[i - 1]))) {
      throw std::invalid_argument(fmt::format(
          "kernel efficiency: flash.{} must be positive and strictly increasing", name));
    }
  }
}

}  // namespace

double FlashAttentionTable::efficiency(FlashPass pass, double head_dim, double seq_len) const {
  const std::vector<double>& grid = pass == FlashPass::kForward ? forward : backward;
  const std::size_t columns = seq_lens.size();
  const auto [i, wd] = bracket(head_dims, head_dim);
  const auto [j, ws] = bracket(seq_lens, seq_len);
  const std::size_t i1 = std::min(i + 1, head_dims.size() - 1);
  const std::size_t j1 = std::min(j + 1, columns - 1);
  auto at = [&](std::size_t r, std::size_t c) { return grid[r * columns + c]; };
  const double low = at(i, j) * (1 - ws) + at(i, j1) * ws;
  const double high = at(i1, j) * (1 - ws) + at(i1, j1) * ws;
  return low * (1 - wd) + high * wd;
}

double KernelEfficiency::gemm_ceiling(Dtype dtype) const {
  switch (dtype) {
    case Dtype::kFp32:
      return gemm_ceiling_fp32;
    case Dtype::kTf32:
      return gemm_ceiling_tf32;
    case Dtype::kBf16:
      return gemm_ceiling_bf16;
    case Dtype::kFp16:
      return gemm_ceiling_fp16;
    case Dtype::kFp8:
      return gemm_ceiling_fp8;
  }
  return gemm_ceiling_fp32;
}

// The conservative default for a datasheet-only device, from these measurements:
//   GEMM 0.65 bf16/fp16: the lowest sustained NVIDIA figure, B200 MSMF 1456.3 of 2250 TFLOP/s =
//     0.647 (stas00/ml-engineering PR #137, branch fast-mamf @ 082816f, compute/accelerator/
//     README.md); fp8 0.60: B200 fp8 MSMF 2795.7 / 4500 = 0.621, rounded down; tf32 0.63: the
//     lowest tf32 value of the presets (B200, 0.636, cluster_presets.cpp), rounded down; fp32
//     (SIMT) has no measurement and takes the 16-bit value (assumption).
//   k_half 512: the small-K constant that fits B200's XLA GEMM table (ROCm/xla
//     xla/service/gpu/model/matmul_interpolator_data.h @ ea2c45f2ca, key sm_100_B200), the
//     largest of the NVIDIA fits.
//   min_gemm_body 5 us: the shortest bf16 GEMM kernels of that table, 256^3, on H100 and B200.
//   memory 0.77: the lowest measured STREAM fraction, MI300X BabelStream Triad 4.09 TB/s of 5.3
//     (Azure AI-benchmarking-guide, fork samuel-bohman @ 3de0c29).
//   FlashAttention 0.25 at s <= 1k, 0.35 at s >= 4k, d = 128, both passes: B200's in-step FA4 0.37
//     (ml-engineering insights/when-to-upgrade-gpus) and A100's FA2 causal f+b 0.32 at s = 512
//     (Dao-AILab/flash-attention README, flash2_a100_fwd_bwd_benchmark.png), rounded down.
KernelEfficiency conservative_kernel_efficiency() {
  KernelEfficiency k;
  k.gemm_ceiling_bf16 = 0.65;
  k.gemm_ceiling_fp16 = 0.65;
  k.gemm_ceiling_tf32 = 0.63;
  k.gemm_ceiling_fp32 = 0.65;
  k.gemm_ceiling_fp8 = 0.60;
  k.gemm_k_half = 512;
  k.min_gemm_body = sim::Time::us(5);
  k.memory_streaming = 0.77;
  k.flash.head_dims = {128};
  k.flash.seq_lens = {1024, 4096};
  k.flash.forward = {0.25, 0.35};
  k.flash.backward = {0.25, 0.35};
  k.calibrated = false;
  return k;
}

std::string describe_conservative(const KernelEfficiency& k) {
  const auto [lo, hi] = std::minmax_element(k.flash.forward.begin(), k.flash.forward.end());
  return fmt::format(
      "GEMM {:.2f} of peak (bf16), {:.2f} (fp8), small-K k_half {:g}, GEMM kernels at least {}, "
      "memory-bound kernels {:.2f} of HBM bandwidth, FlashAttention {:.2f}-{:.2f} of peak",
      k.gemm_ceiling_bf16, k.gemm_ceiling_fp8, k.gemm_k_half, format_time(k.min_gemm_body),
      k.memory_streaming, *lo, *hi);
}

void validate(const KernelEfficiency& k) {
  check_fraction(k.gemm_ceiling_bf16, "gemm_ceiling.bf16");
  check_fraction(k.gemm_ceiling_fp16, "gemm_ceiling.fp16");
  check_fraction(k.gemm_ceiling_tf32, "gemm_ceiling.tf32");
  check_fraction(k.gemm_ceiling_fp32, "gemm_ceiling.fp32");
  check_fraction(k.gemm_ceiling_fp8, "gemm_ceiling.fp8");
  check_fraction(k.memory_streaming, "memory_efficiency");
  if (!(k.gemm_k_half >= 0.0)) {
    throw std::invalid_argument(
        fmt::format("kernel efficiency: gemm_k_half must be >= 0, got {}", k.gemm_k_half));
  }
  if (k.min_gemm_body < sim::Time::zero()) {
    throw std::invalid_argument("kernel efficiency: min_gemm_body must be >= 0");
  }
  check_axis(k.flash.head_dims, "head_dims");
  check_axis(k.flash.seq_lens, "seq_lens");
  const std::size_t cells = k.flash.head_dims.size() * k.flash.seq_lens.size();
  for (const auto* grid : {&k.flash.forward, &k.flash.backward}) {
    if (grid->size() != cells) {
      throw std::invalid_argument(fmt::format(
          "kernel efficiency: a flash grid needs head_dims x seq_lens = {} values, got {}", cells,
          grid->size()));
    }
    for (double v : *grid) check_fraction(v, "flash efficiency");
  }
}

}  // namespace parasim::cost
