#pragma once
// parasim::cost compute cost — how long one kernel takes on one device.
//
// Three kinds of kernel are costed here:
//   * GEMMs, through the GemmCostModel interface. RooflineGemmModel is the analytical default;
//     MeasuredGemmModel (measured_gemm_model.hpp: measured cuBLASLt timings of a version 2
//     profile) implements the same interface and corrects it.
//   * Memory-bound kernels (norms, activations, optimizer updates): bytes moved over achievable
//     HBM bandwidth, memory_bound_time().
//   * Launch overhead: kernel_time() adds DeviceSpec::kernel_launch_overhead to a kernel body.
// FlashAttention kernels are costed in attention_cost.hpp.
//
// Units: FLOPs count a multiply-add as two; bytes are decimal bytes; times are sim::Time.
//
// The roofline model, precisely. For a GemmShape S on a device D with parameters P and the
// device's measured kernel efficiencies K = D.kernels (kernel_efficiency.hpp):
//
//   efficiency(S) = ceiling(S.dtype) * tile(S) * wave(S) * small_k(S)   in (0, ceiling]
//   compute(S)    = S.flops() / (D.peak(S.dtype) * efficiency(S))
//   memory(S)     = S.bytes() / (D.hbm_bandwidth * P.memory_efficiency)
//   gemm_time(S)  = max(compute(S), memory(S), K.min_gemm_body)        (kernel body, no launch)
//
// with ceiling(d) = P.ceiling if set, else K.gemm_ceiling(d) (sustained, per dtype), k_half =
// P.k_half if set, else K.gemm_k_half, Mt x Nt = P.tile_m x P.tile_n, tm = ceil(m/Mt),
// tn = ceil(n/Nt):
//   tile(S)    = (m * n) / (tm*Mt * tn*Nt)              work wasted in padded edge tiles
//   wave(S)    = T / (W * C), T = tm*tn*batch CTAs, C = sm_count * P.ctas_per_sm concurrent CTAs,
//                W = ceil(T / C) waves; 1 when sm_count == 0   idle SMs in the last wave
//   small_k(S) = min(1, r(k) / r(P.k_ref)), r(k) = k / (k + k_half)
//                                                        per-tile prologue/epilogue not amortized
//
// Shape effects follow NVIDIA's "Matrix Multiplication Background" guide
// (docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/): output tiles
// are assigned to thread blocks, a dimension just over a tile multiple wastes a tile, and a grid
// that does not fill the last wave leaves SMs idle. Among typical cuBLAS tiles it lists 256x128
// (the most efficient), 128x128, 128x64, 64x128 and 64x64. Small K also lowers efficiency
// (NVIDIA's Matrix Multiplication Background guide,
// https://docs.nvidia.com/deeplearning/performance/dl-performance-matrix-multiplication/). The functional forms are modelling assumptions; the ceiling, k_half and
// the floor per device come from published GEMM measurements (cluster_presets.cpp).
//
// Invariants: a GemmShape is costed only when m, n, k, batch >= 1 and the device has a positive
// peak for its dtype (peak_fp8 is zero on A100); otherwise std::invalid_argument is thrown.

#include <cstdint>
#include <optional>

#include "costmodel/hardware.hpp"
#include "costmodel/units.hpp"
#include "sim/time.hpp"

namespace parasim::cost {

// C[m x n] = A[m x k] * B[k x n], `batch` independent times (strided batched GEMM).
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  Dtype dtype = Dtype::kBf16;

  // 2 * m * n * k * batch (one multiply-add = two FLOPs).
  Flops flops() const;
  // Minimum HBM traffic: A and B read once, C written once, at bytes_per_element(dtype) each:
  // (m*k + k*n + m*n) * batch * bytes_per_element. Re-reads served from L2 are not counted.
  Bytes bytes() const;

  bool operator==(const GemmShape&) const = default;
};

// Throws std::invalid_argument when a dimension is below 1.
void validate(const GemmShape& shape);

// One GEMM's time and efficiency on one device. Implementations are immutable once built and
// safe to share across threads.
class GemmCostModel {
 public:
  virtual ~GemmCostModel();
  // Kernel body time, excluding launch overhead (see kernel_time()).
  virtual sim::Time gemm_time(const GemmShape& shape) const = 0;
  // Achieved FLOP rate over the dtype's datasheet peak while compute-bound, in (0, 1].
  virtual double efficiency(const GemmShape& shape) const = 0;
};

// Tunables of the roofline model. Every default is a documented assumption; the ceiling and
// k_half are the device's (DeviceSpec::kernels, measured per preset) unless set here.
struct GemmEfficiencyParams {
  // Large-GEMM ceiling, fraction of the datasheet dense peak, for every dtype. Unset: the
  // device's sustained ceiling of the GEMM's dtype (kernel_efficiency.hpp). A profile's
  // "gemm.ceiling" sets it (docs/profile.md).
  std::optional<double> ceiling;

  // Output tile per thread block, in elements. 128x128 is one of the typical cuBLAS tiles the
  // NVIDIA guide lists: big enough for tensor-core efficiency, small enough that mid-sized shapes
  // are not overly penalized by padding. (256x128 is the guide's most efficient tile, but cuBLAS
  // heuristics choose smaller tiles for smaller shapes. One fixed tile is a simplification; a
  // 128x256 tile never fitted the XLA GEMM tables better, research report section 1.2a.)
  std::int64_t tile_m = 128;
  std::int64_t tile_n = 128;

  // Thread blocks resident per SM at once. Large tensor-core tiles fill an SM's shared memory,
  // so 1 is assumed. Wave capacity = sm_count * ctas_per_sm.
  int ctas_per_sm = 1;

  // Small-K penalty r(k) = k / (k + k_half): k_half is the K at which per-tile fixed work
  // (pipeline fill, epilogue writing C) costs as much as the main loop. Unset: the device's
  // (fitted to published GEMM sweeps per device). The curve is normalized to 1 at k_ref and
  // above, because the ceiling was itself measured on large-K shapes. 4096 is an assumption
  // standing in for "large K" in those sweeps.
  std::optional<double> k_half;
  double k_ref = 4096.0;

  // Fraction of HBM bandwidth in the GEMM's memory term. 1.0 makes the memory term the roofline
  // lower bound for the minimal traffic of GemmShape::bytes(). Elementwise kernels use the
  // device's KernelEfficiency::memory_streaming instead.
  double memory_efficiency = 1.0;
};

// Throws std::invalid_argument when a parameter is out of range (ceiling, when set, and
// memory_efficiency in (0, 1], tiles >= 1, ctas_per_sm >= 1, k_half, when set, >= 0, k_ref > 0).
void validate(const GemmEfficiencyParams& params);

// The factors of efficiency(), for reports and tests. efficiency() == product of the four.
struct GemmEfficiencyBreakdown {
  double ceiling = 1.0;
  double tile = 1.0;       // tile quantization, (0, 1]
  double wave = 1.0;       // wave quantization, (0, 1]; 1 when sm_count == 0
  double small_k = 1.0;    // small-K penalty, (0, 1]
  std::int64_t tiles = 0;  // CTAs in the grid, tm * tn * batch
  std::int64_t waves = 0;  // ceil(tiles / wave capacity); 0 when sm_count == 0

  double efficiency() const { return ceiling * tile * wave * small_k; }
};

// The analytical default: shape-aware roofline over the device's datasheet peaks.
class RooflineGemmModel final : public GemmCostModel {
 public:
  // Throws std::invalid_argument for invalid params or device kernel efficiencies.
  explicit RooflineGemmModel(DeviceSpec device, GemmEfficiencyParams params = {});

  sim::Time gemm_time(const GemmShape& shape) const override;
  double efficiency(const GemmShape& shape) const override;

  GemmEfficiencyBreakdown breakdown(const GemmShape& shape) const;
  // flops / (peak(dtype) * efficiency): the time if the GEMM were compute-bound.
  sim::Time compute_time(const GemmShape& shape) const;
  // bytes / (hbm_bandwidth * memory_efficiency): the time if it were memory-bound.
  sim::Time memory_time(const GemmShape& shape) const;

  const DeviceSpec& device() const { return device_; }
  const GemmEfficiencyParams& params() const { return params_; }
  // The ceiling and k_half in use: the params' when set, else the device's.
  double ceiling(Dtype dtype) const;
  double k_half() const;

 private:
  DeviceSpec device_;
  GemmEfficiencyParams params_;
};

// Body time of a memory-bound kernel that moves `moved` bytes (reads plus writes):
// moved / (device.hbm_bandwidth * memory_efficiency), by default the device's measured streaming
// fraction (KernelEfficiency::memory_streaming). Launch overhead is not included.
// Throws std::invalid_argument unless memory_efficiency is in (0, 1] and the bandwidth positive.
sim::Time memory_bound_time(Bytes moved, const DeviceSpec& device, double memory_efficiency);
sim::Time memory_bound_time(Bytes moved, const DeviceSpec& device);

// Time one kernel occupies its stream: body + device.kernel_launch_overhead. Launch overhead
// adds, once per kernel: kernels on one stream are assumed serialized, with no overlap of one
// kernel's launch and the previous kernel's execution (no CUDA graphs). This is pessimistic when
// the host runs ahead of long kernels (their launches are then hidden) and about right for chains
// of short kernels, whose rate the launch path limits.
sim::Time kernel_time(sim::Time body, const DeviceSpec& device);

}  // namespace parasim::cost
