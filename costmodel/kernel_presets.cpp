#include "costmodel/kernel_presets.hpp"

#include <string>
#include <vector>

namespace parasim::cost {
namespace {

// Shared by several devices: what each measurement is, once.

// Small-K constant of the roofline (compute_cost.hpp). XLA's GEMM tables (ROCm/xla fork of
// openxla/xla, xla/service/gpu/model/matmul_interpolator_data.h @ ea2c45f2ca; CUPTI kernel times,
// bf16, m = n = 4096) give 40.3 % of peak at k = 256 and 69.3 % at k = 1024 on sm_90. With the
// ceiling of that (burst) table, 0.80, k_half = 256 gives 41.2 % and 66.0 %; 128 gives 53.3 %
// (32 % too fast). EleutherAI/cookbook benchmarks/sizing sample_results/transformer.out (an
// A100, by its figures): the k = 256 score bmm 64 x 2048 x 256 x 2048 ran at 130.2 TFLOP/s;
// k_half = 256 with the A100 ceiling gives 136, 128 gives 176.
constexpr double kKHalfHopperAmpere = 256;
constexpr const char* kKHalfHopperAmpereSource =
    "256: fits XLA's sm_90 bf16 table (ROCm/xla matmul_interpolator_data.h @ ea2c45f2ca; m=n=4096: "
    "k=256 40.3 % of peak, k=1024 69.3 %; the model gives 41.2 % and 66.0 % at the table's burst "
    "ceiling 0.80, 53.3 % with 128) and EleutherAI/cookbook sizing sample transformer.out (A100 "
    "by its figures; k=256 score bmm 130.2 TFLOP/s; the model 136, 176 with 128)";

// The shortest GEMM kernels of XLA's tables (same file): bf16 256^3 takes 5.0 us on sm_90 and on
// B200, 4.5 us on MI300X (gfx942), kernel only.
constexpr const char* kMinBodySm90 =
    "5 us: XLA sm_90 table (ROCm/xla matmul_interpolator_data.h @ ea2c45f2ca), bf16 256^3 kernel "
    "time 5.0 us";

// FlashAttention-2 on A100 80GB SXM4, causal, forward + backward, TFLOP/s at s = 512 ... 16k
// (Dao-AILab/flash-attention README, assets/flash2_a100_fwd_bwd_benchmark.png; batch x s = 16k
// tokens, hidden 2048). The source measures the two passes together: both take the combined
// efficiency, so their sum is exact and the split between them is not modelled.
const std::vector<double> kFa2SeqLens = {512, 1024, 2048, 4096, 8192, 16384};
const std::vector<double> kFa2A100D64 = {88, 119, 140, 156, 165, 171};
const std::vector<double> kFa2A100D128 = {99, 133, 155, 173, 182, 189};
constexpr const char* kFa2A100Source =
    "FlashAttention-2 causal fwd+bwd on A100 80GB SXM4, d=64: 88, 119, 140, 156, 165, 171 and "
    "d=128: 99, 133, 155, 173, 182, 189 TFLOP/s at s=512..16k of 312 (Dao-AILab/flash-attention "
    "README, assets/flash2_a100_fwd_bwd_benchmark.png); both passes take the combined figure";
// The same benchmark on H100 80GB SXM5 (assets/flash2_h100_fwd_bwd_benchmark.png). FlashAttention-3
// and cuDNN reach about 1.5-1.9x this on H100 (FA3 arXiv 2407.08608 figures 5-6); a scenario
// that runs them overrides the table (docs/scenario.md).
const std::vector<double> kFa2H100D64 = {141, 192, 232, 257, 273, 284};
const std::vector<double> kFa2H100D128 = {163, 221, 265, 294, 308, 328};
constexpr const char* kFa2H100Source =
    "FlashAttention-2 causal fwd+bwd on H100 80GB SXM5, d=64: 141, 192, 232, 257, 273, 284 and "
    "d=128: 163, 221, 265, 294, 308, 328 TFLOP/s at s=512..16k of 989.4 (Dao-AILab/flash-attention "
    "README, assets/flash2_h100_fwd_bwd_benchmark.png); both passes take the combined figure";

FlashAttentionTable table(const std::vector<double>& seq_lens, std::vector<double> head_dims,
                          const std::vector<std::vector<double>>& tflops, double peak_tflops) {
  FlashAttentionTable t;
  t.head_dims = std::move(head_dims);
  t.seq_lens = seq_lens;
  for (const auto& row : tflops) {
    for (double v : row) t.forward.push_back(v / peak_tflops);
  }
  t.backward = t.forward;
  return t;
}

// Every 16-bit, tf32 and fp32 ceiling at once; fp32 (SIMT) is measured nowhere in the sources
// and takes the 16-bit ceiling (assumption).
void set_ceilings(KernelEfficiency& k, double sixteen_bit, double tf32, double fp8) {
  k.gemm_ceiling_bf16 = sixteen_bit;
  k.gemm_ceiling_fp16 = sixteen_bit;
  k.gemm_ceiling_tf32 = tf32;
  k.gemm_ceiling_fp32 = sixteen_bit;
  k.gemm_ceiling_fp8 = fp8;
}

constexpr const char* kFp32Assumed =
    "no FP32 (SIMT) GEMM measurement in the sources: the 16-bit ceiling is assumed";

}  // namespace

KernelPreset a100_kernels(bool hbm2e_80gb) {
  KernelPreset p;
  KernelEfficiency& k = p.kernels;
  KernelEfficiencySources& s = p.sources;
  // Sustained: cuBLASLt fp16 16384^3 after 10,000 warm-up iterations, 256.5 TFLOP/s of 312
  // (Azure/AI-benchmarking-guide @ 8fd0c6e, Azure_Results/ND_A100_v4 results; tile and wave
  // factors of the model are 1 and 0.998 there). TF32: mli/transformers-benchmarks measured A100
  // 80GB square matmuls at 116 TF32 and 230 FP16 TFLOP/s, 0.744 and 0.737 of their peaks: the
  // same fraction, so TF32 takes the FP16 ceiling. No FP8 on A100 (peak 0): the value is unused.
  const double ceiling = 256.5 / 312.0;
  set_ceilings(k, ceiling, ceiling, ceiling);
  s.gemm_ceiling_fp16 =
      "256.5/312 = 0.822: cuBLASLt fp16 16384^3 after 10,000 warm-ups (sustained), "
      "Azure/AI-benchmarking-guide @ 8fd0c6e Azure_Results ND A100 v4";
  s.gemm_ceiling_bf16 =
      "as fp16 (same tensor-core rate); the MAMF bf16 burst maximum 271.2 TFLOP/s = 0.869 "
      "(stas00/ml-engineering compute/accelerator/README.md @ 744d01e) is consistent";
  s.gemm_ceiling_tf32 =
      "as fp16: mli/transformers-benchmarks README, A100 80GB square matmul TF32 116 of 156 "
      "(0.744) and FP16 230 of 312 (0.737) TFLOP/s, the same fraction";
  s.gemm_ceiling_fp32 = kFp32Assumed;
  s.gemm_ceiling_fp8 = "A100 has no FP8 tensor cores (peak 0): unused";
  k.gemm_k_half = kKHalfHopperAmpere;
  s.gemm_k_half = kKHalfHopperAmpereSource;
  k.min_gemm_body = sim::Time::us(5);
  s.min_gemm_body = std::string(kMinBodySm90) + "; no A100 measurement, the H100 figure is assumed";
  if (hbm2e_80gb) {
    // BabelStream on A100-SXM4-80GB: Copy 1.61, Mul 1.61, Add 1.70, Triad 1.70 TB/s (Azure
    // AI-benchmarking-guide, ND A100 v4 results); their mean over 2,039 GB/s.
    k.memory_streaming = (1.61 + 1.61 + 1.70 + 1.70) / 4.0 / 2.039;
    s.memory_streaming =
        "0.812 = mean of BabelStream Copy 1.61, Mul 1.61, Add 1.70, Triad 1.70 TB/s over 2.039 "
        "(Azure/AI-benchmarking-guide @ 8fd0c6e, ND A100 v4)";
  } else {
    // A100 40GB: memcopy 1355 GB/s of 1,555 (PTsolvers/gpu-workshop-JuliaCon23 issue #7,
    // maintainer's "memcopy measured BW").
    k.memory_streaming = 1355.0 / 1555.0;
    s.memory_streaming =
        "1355/1555 = 0.871: measured memcopy bandwidth of an A100 40GB (PTsolvers/"
        "gpu-workshop-JuliaCon23 issue #7)";
  }
  k.flash = table(kFa2SeqLens, {64, 128}, {kFa2A100D64, kFa2A100D128}, 312.0);
  s.flash = hbm2e_80gb ? kFa2A100Source
                       : std::string(kFa2A100Source) +
                             "; measured on the 80 GB part, same SMs and clocks (compute-bound)";
  k.calibrated = true;
  return p;
}

KernelPreset h100_sxm_kernels() {
  KernelPreset p = h200_sxm_kernels();
  KernelEfficiency& k = p.kernels;
  KernelEfficiencySources& s = p.sources;
  // 16-bit and tf32 as H200 (same GH100 die, 132 SMs, same 700 W limit); fp8 has an H100
  // measurement of its own: cuBLASLt fp8 32768^3 after 10,000 warm-ups, 1382.2 of 1978.9 TFLOP/s
  // (Azure AI-benchmarking-guide, ND H100 v5 results).
  k.gemm_ceiling_fp8 = 1382.2 / 1978.9;
  s.gemm_ceiling_fp8 =
      "1382.2/1978.9 = 0.698: cuBLASLt fp8 32768^3 after 10,000 warm-ups (sustained), "
      "Azure/AI-benchmarking-guide @ 8fd0c6e ND H100 v5";
  s.gemm_ceiling_bf16 = "as H200 (same GH100 die, 132 SMs, 700 W): " + s.gemm_ceiling_bf16;
  s.gemm_ceiling_fp16 = s.gemm_ceiling_bf16;
  // BabelStream on H100 80GB HBM3: Copy 2.90, Add 2.97, Triad 2.97 TB/s (Azure ND H100 v5).
  k.memory_streaming = (2.90 + 2.97 + 2.97) / 3.0 / 3.35;
  s.memory_streaming =
      "0.880 = mean of BabelStream Copy 2.90, Add 2.97, Triad 2.97 TB/s over 3.35 "
      "(Azure/AI-benchmarking-guide @ 8fd0c6e, ND H100 v5)";
  s.flash = kFa2H100Source;
  return p;
}

KernelPreset h200_sxm_kernels() {
  KernelPreset p;
  KernelEfficiency& k = p.kernels;
  KernelEfficiencySources& s = p.sources;
  // Sustained (MSMF: thermally soaked, at the power limit, ~693 W @ 1465 MHz) bf16 708.5 and fp8
  // 1288.7 TFLOP/s (stas00/ml-engineering PR #137, branch fast-mamf @ 082816f, torch 2.13.0+cu130).
  // TF32: XLA's sm_90 4096^3 burst 81.5 % of 494.7 times H200's sustained/burst bf16 ratio
  // 708.5/841.9 [inference: the clock falls the same way for every dtype].
  set_ceilings(k, 708.5 / 989.4, 0.815 * 708.5 / 841.9, 1288.7 / 1978.9);
  s.gemm_ceiling_bf16 =
      "708.5/989.4 = 0.716: H200 bf16 MSMF, sustained at the power limit (stas00/ml-engineering "
      "PR #137, fast-mamf @ 082816f, torch 2.13.0+cu130)";
  s.gemm_ceiling_fp16 = s.gemm_ceiling_bf16;
  s.gemm_ceiling_tf32 =
      "0.815 x 708.5/841.9 = 0.686: XLA sm_90 tf32 4096^3 burst 81.5 % (ROCm/xla "
      "matmul_interpolator_data.h @ ea2c45f2ca) times H200's bf16 sustained/burst ratio "
      "[inference]";
  s.gemm_ceiling_fp32 = kFp32Assumed;
  s.gemm_ceiling_fp8 =
      "1288.7/1978.9 = 0.651: H200 fp8 MSMF (stas00/ml-engineering PR #137, fast-mamf @ 082816f)";
  k.gemm_k_half = kKHalfHopperAmpere;
  s.gemm_k_half = kKHalfHopperAmpereSource;
  k.min_gemm_body = sim::Time::us(5);
  s.min_gemm_body = kMinBodySm90;
  // BabelStream on H200: Copy 4.01, Add 4.15, Triad 4.15 TB/s (Azure ND H200 v5).
  k.memory_streaming = (4.01 + 4.15 + 4.15) / 3.0 / 4.8;
  s.memory_streaming =
      "0.855 = mean of BabelStream Copy 4.01, Add 4.15, Triad 4.15 TB/s over 4.8 "
      "(Azure/AI-benchmarking-guide @ 8fd0c6e, ND H200 v5)";
  k.flash = table(kFa2SeqLens, {64, 128}, {kFa2H100D64, kFa2H100D128}, 989.4);
  s.flash = std::string(kFa2H100Source) + "; same compute as H100 (compute-bound)";
  k.calibrated = true;
  return p;
}

KernelPreset b200_kernels() {
  KernelPreset p;
  KernelEfficiency& k = p.kernels;
  KernelEfficiencySources& s = p.sources;
  // Sustained MSMF (~994 W @ 1339 MHz): bf16 1456.3, fp8 2795.7 TFLOP/s (ml-engineering PR #137).
  // TF32: XLA B200 (sm_100_B200) 4096^3 b=4 869.7 TFLOP/s of 1125 = 0.773, times B200's
  // sustained/burst bf16 ratio 1456.3/1770.9 [inference].
  set_ceilings(k, 1456.3 / 2250.0, 869.7 / 1125.0 * 1456.3 / 1770.9, 2795.7 / 4500.0);
  s.gemm_ceiling_bf16 =
      "1456.3/2250 = 0.647: B200 bf16 MSMF, sustained at the power limit (stas00/ml-engineering "
      "PR #137, fast-mamf @ 082816f, torch 2.13.0+cu130)";
  s.gemm_ceiling_fp16 = s.gemm_ceiling_bf16;
  s.gemm_ceiling_tf32 =
      "869.7/1125 x 1456.3/1770.9 = 0.636: XLA sm_100_B200 tf32 4096^3 (ROCm/xla "
      "matmul_interpolator_data.h @ ea2c45f2ca) times B200's bf16 sustained/burst ratio "
      "[inference]";
  s.gemm_ceiling_fp32 = kFp32Assumed;
  s.gemm_ceiling_fp8 =
      "2795.7/4500 = 0.621: B200 fp8 MSMF (stas00/ml-engineering PR #137, fast-mamf @ 082816f)";
  k.gemm_k_half = 512;
  s.gemm_k_half =
      "512: least-squares fit of the roofline to XLA's sm_100_B200 bf16 table (ROCm/xla "
      "matmul_interpolator_data.h @ ea2c45f2ca; bias 0.1 %; 128 is 12.5 % too fast)";
  k.min_gemm_body = sim::Time::us(5);
  s.min_gemm_body = "5 us: XLA sm_100_B200 table, bf16 256^3 kernel time 5.0 us";
  // No STREAM / BabelStream figure for B200 was found. The same GB100 die with the same HBM3e
  // stacks in GB200 streams 6389 GB/s in gpu-benches' roofline at 0.25 FLOP/B (two runs, 6389 and
  // 6388), of the datasheet's 8000: 0.799; Blackwell Ultra (B300, 8 TB/s) measures 0.84
  // (torchao's roofline table, "from measurement on hardware").
  k.memory_streaming = 6389.0 / 8000.0;
  s.memory_streaming =
      "6389/8000 = 0.799: GB200 (the B200 die and HBM3e) gpu-roofline at 0.25 FLOP/B "
      "(xxrjun/gpu-benches @ 739d965 gpu-roofline/gb200.txt); no B200 STREAM figure found; B300 "
      "0.84 (pytorch/ao @ 36027d8 torchao/testing/training/roofline_utils.py) [proxy]";
  // FlashAttention-4 kernel benchmark on B200 (Dao-AILab/flash-attention PR #2280, 2026-02-27:
  // bf16, d = 128, 16 heads, batch 4, s = 8192, causal): forward 1418.1 TFLOP/s, backward (2-CTA)
  // 1208.6 TFLOP/s, of 2250. One sequence length: constant along it.
  k.flash = table({8192}, {128}, {{1418.1}}, 2250.0);
  k.flash.backward = {1208.6 / 2250.0};
  s.flash =
      "forward 1418.1/2250 = 0.630, backward 1208.6/2250 = 0.537 at d=128, s=8k, causal: "
      "FlashAttention-4 on B200 (Dao-AILab/flash-attention PR #2280 benchmark, bf16, 16 heads, "
      "batch 4)";
  k.calibrated = true;
  return p;
}

KernelPreset mi300x_kernels() {
  KernelPreset p;
  KernelEfficiency& k = p.kernels;
  KernelEfficiencySources& s = p.sources;
  // bf16: MAMF 668.4 TFLOP/s with torch 2.5.1 + ROCm 6.3 and TunableOp (ml-engineering accelerator
  // README @ 744d01e); no sustained figure exists, so this burst value may be optimistic. fp8:
  // hipBLASLt 8192^3 1159.23 of 2614.9 (Azure AI-benchmarking-guide fork samuel-bohman @ 3de0c29).
  // TF32: XLA gfx942 4096^3, 250.6 of 653.7.
  set_ceilings(k, 668.4 / 1307.4, 250.6 / 653.7, 1159.23 / 2614.9);
  s.gemm_ceiling_bf16 =
      "668.4/1307.4 = 0.511: MI300X bf16 MAMF, torch 2.5.1+ROCm 6.3, TunableOp (stas00/"
      "ml-engineering compute/accelerator/README.md @ 744d01e); no sustained figure found";
  s.gemm_ceiling_fp16 = s.gemm_ceiling_bf16;
  s.gemm_ceiling_tf32 =
      "250.6/653.7 = 0.383: XLA gfx942 tf32 4096^3 (ROCm/xla matmul_interpolator_data.h @ "
      "ea2c45f2ca)";
  s.gemm_ceiling_fp32 = kFp32Assumed;
  s.gemm_ceiling_fp8 =
      "1159.23/2614.9 = 0.443: hipBLASLt fp8 8192^3 (Azure AI-benchmarking-guide, fork "
      "samuel-bohman @ 3de0c29, ND MI300X v5)";
  k.gemm_k_half = 256;
  s.gemm_k_half =
      "256: fit of the roofline to XLA's gfx942 bf16 table at ceiling 0.51 (128-256; shape "
      "behaviour erratic, mean |log error| 0.31)";
  k.min_gemm_body = sim::Time::us(4.5);
  s.min_gemm_body = "4.5 us: XLA gfx942 table, bf16 256^3 kernel time";
  // BabelStream (HIP) on MI300X: Copy 4.11, Mul 4.26, Add 4.14, Triad 4.09 TB/s.
  k.memory_streaming = (4.11 + 4.26 + 4.14 + 4.09) / 4.0 / 5.3;
  s.memory_streaming =
      "0.783 = mean of BabelStream Copy 4.11, Mul 4.26, Add 4.14, Triad 4.09 TB/s over 5.3 "
      "(Azure AI-benchmarking-guide, fork samuel-bohman @ 3de0c29)";
  // FlashAttention-2, batch 2, s = 8192, d = 64: 328.6 TFLOP/s (same Azure results; the first
  // result line, non-causal [inference]). One point: constant.
  k.flash = table({8192}, {64}, {{328.6}}, 1307.4);
  s.flash =
      "328.6/1307.4 = 0.251 at d=64, s=8k, both passes: FlashAttention-2 benchmark, non-causal "
      "(Azure AI-benchmarking-guide fork samuel-bohman @ 3de0c29)";
  k.calibrated = true;
  return p;
}

KernelPreset b300_kernels() {
  KernelPreset p = b200_kernels();
  KernelEfficiency& k = p.kernels;
  KernelEfficiencySources& s = p.sources;
  // Transformer Engine's GEMM profile on "NVIDIA B300 SXM6 AC" (TE docs/examples/gemm_profiling/
  // gemm_profiling.rst, BF16 fprop of the 5B config's largest GEMM, M x K x N = 15872 x 4096 x
  // 12288): 1.071 ms, i.e. 2 x 15872 x 4096 x 12288 / 1.071 ms = 1491.8 TFLOP/s of 2250. One
  // shape timed by a benchmark loop (burst, not thermally soaked), so it is at most the sustained
  // ceiling; it lies within 3 % of B200's sustained 0.647.
  const double bf16_tflops = 2.0 * 15872.0 * 4096.0 * 12288.0 / 1.071e-3 / 1e12;
  k.gemm_ceiling_bf16 = bf16_tflops / 2250.0;
  k.gemm_ceiling_fp16 = k.gemm_ceiling_bf16;
  s.gemm_ceiling_bf16 =
      "1491.8/2250 = 0.663: B300 SXM6 bf16 GEMM 15872x4096x12288 in 1.071 ms (Transformer Engine "
      "docs/examples/gemm_profiling/gemm_profiling.rst; burst, one shape)";
  s.gemm_ceiling_fp16 = s.gemm_ceiling_bf16;
  s.gemm_ceiling_tf32 = "no B300 measurement: B200's, " + s.gemm_ceiling_tf32;
  s.gemm_ceiling_fp8 =
      "no B300 per-shape fp8 kernel time (TE's profile times fp8 with its quantisation): B200's, " +
      s.gemm_ceiling_fp8;
  s.gemm_k_half = "no B300 measurement: B200's, " + s.gemm_k_half;
  s.min_gemm_body = "no B300 measurement: B200's, " + s.min_gemm_body;
  s.memory_streaming = "no B300 measurement: B200's, " + s.memory_streaming;
  s.flash = "no B300 measurement: B200's, " + s.flash;
  return p;
}

KernelPreset borrowed_kernels(KernelPreset measured, const std::string& device,
                              const std::string& measured_on) {
  KernelEfficiencySources& s = measured.sources;
  const std::string prefix = "no measurement of " + device + ": " + measured_on + "'s, ";
  for (std::string* text :
       {&s.gemm_ceiling_bf16, &s.gemm_ceiling_fp16, &s.gemm_ceiling_tf32, &s.gemm_ceiling_fp32,
        &s.gemm_ceiling_fp8, &s.gemm_k_half, &s.min_gemm_body, &s.memory_streaming, &s.flash}) {
    *text = prefix + *text;
  }
  return measured;
}

}  // namespace parasim::cost
