#include "costmodel/precision/quantization.hpp"

namespace parasim::cost {
namespace {

constexpr double kBf16 = 2.0;  // bytes per element of the high-precision operand

// quantization.hpp's sources.
constexpr double kMxfp8GemmRate = 6.812 / 7.161;
constexpr double kBlockwiseHopperGemmRate = (1358.0 / 1978.9) / (1382.2 / 1978.9);

// A weight's per-step copies: a column-wise copy is its own tensor unless the recipe is
// per-tensor on a device whose GEMMs take any layout.
int weight_copies(const QuantRecipeInfo& info, Architecture a) {
  return info.per_tensor && !low_precision_support(a).fp8_needs_transpose ? 1 : 2;
}

}  // namespace

const char* quant_recipe_name(QuantRecipe r) {
  switch (r) {
    case QuantRecipe::kNone:
      return "none";
    case QuantRecipe::kDelayed:
      return "delayed";
    case QuantRecipe::kTensorwise:
      return "tensorwise";
    case QuantRecipe::kBlockwise:
      return "blockwise";
    case QuantRecipe::kMxfp8:
      return "mxfp8";
    case QuantRecipe::kTorchaoTensorwise:
      return "torchao-tensorwise";
    case QuantRecipe::kTorchaoRowwise:
      return "torchao-rowwise";
  }
  return "none";
}

std::optional<QuantRecipe> parse_quant_recipe(std::string_view name) {
  if (name == "none") return QuantRecipe::kNone;
  for (QuantRecipe r : kAllQuantRecipes) {
    if (name == quant_recipe_name(r)) return r;
  }
  return std::nullopt;
}

QuantRecipeInfo quant_recipe_info(QuantRecipe r) {
  QuantRecipeInfo i;
  switch (r) {
    case QuantRecipe::kNone:
    case QuantRecipe::kDelayed:
    case QuantRecipe::kTensorwise:
      break;
    case QuantRecipe::kBlockwise:
      i.scale_bytes_per_element = 4.0 / 128.0;
      i.weight_scale_bytes_per_element = 4.0 / (128.0 * 128.0);
      i.per_tensor = false;
      break;
    case QuantRecipe::kMxfp8:
      i.scale_bytes_per_element = 1.0 / 32.0;
      i.weight_scale_bytes_per_element = 1.0 / 32.0;
      i.per_tensor = false;
      i.needs_blackwell_blocks = true;
      break;
    case QuantRecipe::kTorchaoTensorwise:
    case QuantRecipe::kTorchaoRowwise:
      i.library = QuantLibrary::kTorchao;
      i.caches_weights = false;
      i.saves_quantized_input = false;
      i.per_tensor = r == QuantRecipe::kTorchaoTensorwise;
      break;
  }
  return i;
}

std::optional<std::string_view> quant_recipe_refusal(QuantRecipe r, Architecture a) {
  const LowPrecisionSupport s = low_precision_support(a);
  if (r == QuantRecipe::kNone) return std::nullopt;
  if (!s.fp8) return "the device has no FP8 tensor cores (FP8 needs compute capability 8.9+)";
  if (r == QuantRecipe::kMxfp8 && !s.mxfp8) {
    return "MXFP8 needs block-scaled tensor cores (Blackwell, compute capability 10.0; or CDNA4)";
  }
  if (r == QuantRecipe::kBlockwise && !s.fp8_blockwise) {
    return "blockwise FP8 needs compute capability 9.0+ (Hopper or Blackwell)";
  }
  return std::nullopt;
}

double quant_gemm_rate(QuantRecipe r, Architecture a) {
  switch (r) {
    case QuantRecipe::kMxfp8:
      return kMxfp8GemmRate;
    case QuantRecipe::kBlockwise:
      return a == Architecture::kBlackwell ? kMxfp8GemmRate : kBlockwiseHopperGemmRate;
    default:
      return 1.0;
  }
}

LinearQuantKernels linear_quant_kernels(QuantRecipe r, Architecture a, double tokens,
                                        double out_features, double in_features, double batch,
                                        bool fp8_params) {
  LinearQuantKernels k;
  const QuantRecipeInfo info = quant_recipe_info(r);
  const double x = tokens * in_features * batch;  // every group's rows
  const double w = out_features * in_features * batch;
  const double g = tokens * out_features * batch;
  const double q = 1.0 + info.scale_bytes_per_element;  // bytes of one FP8 element with its scale
  const bool transpose = low_precision_support(a).fp8_needs_transpose;
  // TE: the cast writes the copies the GEMMs need (quantization.hpp).
  auto te_cast = [&](std::vector<double>& out, double e, int copies, double bytes) {
    if (r == QuantRecipe::kTensorwise) out.push_back(kBf16 * e);  // the amax pass
    out.push_back(kBf16 * e + copies * bytes * e);
  };
  const double qw = 1.0 + info.weight_scale_bytes_per_element;
  switch (r) {
    case QuantRecipe::kNone:
      break;
    case QuantRecipe::kDelayed:
    case QuantRecipe::kTensorwise:
    case QuantRecipe::kBlockwise:
    case QuantRecipe::kMxfp8: {
      const int copies = info.per_tensor && !transpose ? 1 : 2;
      te_cast(k.forward, x, copies, q);
      te_cast(k.backward, g, copies, q);
      const bool transposed_per_use = fp8_params && info.per_tensor && transpose;
      te_cast(k.per_step, w, transposed_per_use ? 1 : weight_copies(info, a), qw);
      if (transposed_per_use) k.backward.push_back(2 * w);  // the FP8 weight's transpose
      break;
    }
    case QuantRecipe::kTorchaoTensorwise:
      for (auto* pass : {&k.forward, &k.backward}) {
        const double e = pass == &k.forward ? x : g;
        pass->push_back(kBf16 * e);          // amax, first stage
        pass->push_back(0.0);                // amax, second stage (a few KB)
        pass->push_back(kBf16 * e + 2 * e);  // one cast: dim-0 and dim-1 copies
      }
      k.forward.push_back(kBf16 * w);  // the weight's amax
      k.forward.push_back(0.0);
      k.forward.push_back(kBf16 * w + w);   // its forward cast
      k.backward.push_back(kBf16 * w + w);  // its backward cast
      break;
    case QuantRecipe::kTorchaoRowwise:
      for (auto* pass : {&k.forward, &k.backward}) {
        const double e = pass == &k.forward ? x : g;
        pass->push_back(kBf16 * e + e + kBf16 * e);  // dim-0 FP8 and a bf16 transpose
        pass->push_back(kBf16 * e + e);              // the transpose cast
      }
      k.forward.push_back(kBf16 * w + w);
      k.backward.push_back(kBf16 * w + kBf16 * w);
      k.backward.push_back(kBf16 * w + w);
      break;
  }
  return k;
}

double saved_linear_input_bytes(QuantRecipe r) {
  const QuantRecipeInfo info = quant_recipe_info(r);
  if (r == QuantRecipe::kNone || !info.saves_quantized_input) return kBf16;
  return 1.0 + info.scale_bytes_per_element;
}

double cached_weight_bytes_per_element(QuantRecipe r, Architecture a) {
  const QuantRecipeInfo info = quant_recipe_info(r);
  if (r == QuantRecipe::kNone || !info.caches_weights) return 0.0;
  return weight_copies(info, a) * (1.0 + info.weight_scale_bytes_per_element);
}

double fp8_parameter_bytes_per_element(QuantRecipe r, Architecture a) {
  const QuantRecipeInfo info = quant_recipe_info(r);
  if (r == QuantRecipe::kNone || info.library == QuantLibrary::kTorchao) return kBf16;
  return (info.per_tensor ? 1 : weight_copies(info, a)) *
         (1.0 + info.weight_scale_bytes_per_element);
}

}  // namespace parasim::cost
