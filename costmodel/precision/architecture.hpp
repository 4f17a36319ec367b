#pragma once
// parasim::cost GPU architecture — what a device's tensor cores do with low-precision formats,
// which decides which FP8/FP4 scaling recipes run on it and what extra kernels they need.
//
// Sources (Transformer Engine @ d0067d0d, transformer_engine/pytorch/quantization.py, the checks
// at fp8 autocast entry; TE docs features/low_precision_training):
//   * FP8 needs compute capability 8.9 or newer (Ada, Hopper, Blackwell).
//   * Hopper's FP8 GEMMs take the TN layout only: a column-wise (transposed) copy of an operand is
//     a physical transpose. Blackwell takes TN, NT and NN: per-tensor FP8 needs no transpose
//     (introduction.rst, performance_considerations.rst "Hopper ... TN only").
//   * MXFP8 (32-element blocks, E8M0 scales) and NVFP4 need compute capability 10.0 (Blackwell).
//   * Float8BlockScaling (1x128 / 128x128, DeepSeek-V3's) runs natively from 9.0; on 10.0 TE
//     emulates it with MXFP8.
//   * AMD: torchtitan's float8 converter accepts ROCm gfx942 (CDNA3, MI300X/MI325X) and its MX
//     converter gfx950 (CDNA4, MI355X) (torchtitan 0.2.2 components/quantization/float8.py, mx.py).
// kUnknown (a custom device that does not say): per-tensor FP8 only, priced with Hopper's
// transposes (the dearer assumption); block-scaled formats refused until the scenario names it.

#include <optional>
#include <string_view>

namespace parasim::cost {

enum class Architecture { kUnknown, kAmpere, kHopper, kBlackwell, kCdna3, kCdna4 };

// "unknown", "ampere", "hopper", "blackwell", "cdna3", "cdna4".
const char* architecture_name(Architecture a);
std::optional<Architecture> parse_architecture(std::string_view name);
inline constexpr Architecture kAllArchitectures[] = {
    Architecture::kUnknown,   Architecture::kAmpere, Architecture::kHopper,
    Architecture::kBlackwell, Architecture::kCdna3,  Architecture::kCdna4};

// What an architecture's tensor cores take.
struct LowPrecisionSupport {
  bool fp8 = false;                 // per-tensor scaled FP8 GEMMs
  bool fp8_needs_transpose = true;  // column-wise operands are physical transposes (TN only)
  bool fp8_blockwise = false;       // 1x128 / 128x128 block-scaled FP8 (native or emulated)
  bool mxfp8 = false;               // 32-element blocks, E8M0 scales
  bool nvfp4 = false;               // 16-element blocks, E4M3 scales, FP4 (E2M1) data
};
LowPrecisionSupport low_precision_support(Architecture a);

}  // namespace parasim::cost
