// Number formats of the GEMMs: 16/32-bit training, and FP8 with a scaling recipe
// (costmodel/precision/quantization.hpp; docs/fp8.md). Megatron-core 0.19.2 builds the
// Transformer Engine recipes (core/fp8_utils.py get_fp8_recipe, transformer_config.py); torchtitan
// the torchao ones (components/quantization/float8.py).
#include <fmt/format.h>

#include "strategies/registry/kind_lists.hpp"

namespace parasim::strat {
namespace {

void device_runs_fp8(const Scenario& s, cost::Diagnostics& d) {
  const auto& dev = s.cluster.device;
  if (!(dev.peak_fp8.flop_per_s > 0)) {
    d.add("/training/precision",
          fmt::format("the device {} has no fp8 peak FLOP rate; add cluster.device.peak.fp8 or "
                      "train in bf16",
                      dev.name.empty() ? "(custom)" : dev.name));
  }
  if (auto why = cost::quant_recipe_refusal(s.training.fp8.recipe, dev.architecture)) {
    d.add("/training/fp8/recipe", fmt::format("recipe {} cannot run on {} ({}): {}",
                                              cost::quant_recipe_name(s.training.fp8.recipe),
                                              dev.name.empty() ? "this device" : dev.name,
                                              cost::architecture_name(dev.architecture), *why));
  }
}

// megatron-core 0.19.2 transformer_config.py: num_layers_at_{start,end}_in_bf16 within
// [0, num_layers // pp]; delayed scaling refuses bf16 first/last layers (one outer autocast per
// block, the amax reduction would break).
void bf16_layers_fit(const Scenario& s, cost::Diagnostics& d) {
  const auto& f = s.training.fp8;
  const int most = s.model.layers / s.parallel.pp;
  for (const auto& [count, key] : {std::pair{f.bf16_layers_at_start, "bf16_layers_at_start"},
                                   std::pair{f.bf16_layers_at_end, "bf16_layers_at_end"}}) {
    if (count > most) {
      d.add(fmt::format("/training/fp8/{}", key),
            fmt::format("at most layers / pp = {} / {} = {} layers (Megatron-core's limit)",
                        s.model.layers, s.parallel.pp, most));
    }
  }
  if (f.recipe == cost::QuantRecipe::kDelayed &&
      (f.bf16_layers_at_start > 0 || f.bf16_layers_at_end > 0)) {
    d.add("/training/fp8/recipe",
          "delayed scaling does not support bf16 first/last layers (Megatron-core refuses "
          "it): use tensorwise, blockwise or mxfp8, or set the bf16 layers to 0");
  }
}

// --fp8-param-gather needs Megatron's distributed optimizer (ZeRO 1/2 here); torchao's float8
// all-gather is FSDP's (ZeRO 3) and tensorwise only (torchao float8 config.py).
void param_gather_applies(const Scenario& s, cost::Diagnostics& d) {
  const auto& f = s.training.fp8;
  if (!f.param_gather) return;
  const auto library = cost::quant_recipe_info(f.recipe).library;
  const int zero = s.parallel.zero_stage;
  if (library == cost::QuantLibrary::kTransformerEngine && (zero < 1 || zero > 2)) {
    d.add("/training/fp8/param_gather",
          "Megatron's --fp8-param-gather all-gathers the distributed optimizer's parameters: set "
          "parallel.zero_stage 1 or 2 (Megatron turns it off under FSDP)");
  }
  if (library == cost::QuantLibrary::kTorchao &&
      (f.recipe != cost::QuantRecipe::kTorchaoTensorwise || zero != 3)) {
    d.add("/training/fp8/param_gather",
          "torchao's float8 all-gather is FSDP's (parallel.zero_stage 3) with the "
          "torchao-tensorwise recipe only");
  }
}

// What the builder models with FP8.
void modelled_with_fp8(const Scenario& s, cost::Diagnostics& d) {
  if (s.model.low_rank.enabled()) {
    d.add("/training/precision", "FP8 is not modelled for low-rank (BOOST) models: train in bf16");
  }
  if (s.training.precision != cost::Dtype::kBf16) {
    d.add("/training/precision", "FP8 runs with bf16 activations");
  }
  if (s.parallel.tp_placement == TpPlacement::kTsp) {
    d.add("/parallel/tp_placement",
          "FP8 is not modelled with TSP's weight ring (each rank quantises the shards passing "
          "through): use the megatron placement or train in bf16");
  }
  const auto& f0 = s.training.fp8;
  if (f0.bf16_layers_at_start + f0.bf16_layers_at_end >= s.model.layers) {
    d.add("/training/fp8/bf16_layers_at_end",
          fmt::format("the bf16 layers at the start and the end ({} + {}) cover all {} layers: "
                      "nothing runs in FP8; train in bf16",
                      f0.bf16_layers_at_start, f0.bf16_layers_at_end, s.model.layers));
  }
  const auto& f = s.training.fp8;
  const bool torchao = cost::quant_recipe_info(f.recipe).library == cost::QuantLibrary::kTorchao;
  const Fp8Format fixed =
      f.recipe == cost::QuantRecipe::kTorchaoRowwise ? Fp8Format::kE4m3 : Fp8Format::kHybrid;
  if (torchao && f.format != fixed) {
    d.add("/training/fp8/format",
          fmt::format("torchao's {} recipe fixes the format to {}",
                      cost::quant_recipe_name(f.recipe), fp8_format_name(fixed)));
  }
}

constexpr const char* kTe =
    "Micikevicius et al. 2022, FP8 Formats for Deep Learning, arXiv 2209.05433; NVIDIA "
    "Transformer Engine recipes";

Entry sixteen_or_32(cost::Dtype dtype, const std::string& description) {
  Entry e;
  e.kind = EntryKind::kPrecision;
  e.name = e.value = cost::dtype_name(dtype);
  e.description = description;
  e.paper = "Micikevicius et al. 2018, Mixed Precision Training, arXiv 1710.03740";
  e.builder = "step_writer.hpp: StepWriter::gemm";
  e.traits = PrecisionTraits{dtype, cost::QuantRecipe::kNone};
  return e;
}

Entry fp8(cost::QuantRecipe recipe, const std::string& description, const std::string& paper) {
  Entry e;
  e.kind = EntryKind::kPrecision;
  e.name = fmt::format("fp8:{}", cost::quant_recipe_name(recipe));
  e.value = "fp8";
  e.description = description;
  e.paper = paper;
  e.rules = {device_runs_fp8, bf16_layers_fit, param_gather_applies, modelled_with_fp8};
  e.builder = "step_writer.hpp: StepWriter::linear (quantization.hpp's kernels)";
  e.traits = PrecisionTraits{cost::Dtype::kBf16, recipe};
  std::vector<std::string> recipes;
  for (auto r : cost::kAllQuantRecipes) recipes.emplace_back(cost::quant_recipe_name(r));
  ParameterSpec p;
  p.path = "/training/fp8/recipe";
  p.default_value = "delayed";
  p.choices = recipes;
  p.meaning = "the scaling recipe (Megatron's --fp8-recipe; torchao's for torchtitan)";
  e.parameters.push_back(p);
  p = ParameterSpec{};
  p.path = "/training/fp8/format";
  p.default_value = "hybrid (torchao-rowwise: e4m3)";
  p.choices = {"hybrid", "e4m3"};
  p.meaning = "hybrid: E4M3 forward, E5M2 gradients (Megatron's --fp8-format)";
  e.parameters.push_back(p);
  p = ParameterSpec{};
  p.path = "/training/fp8/param_gather";
  p.default_value = "false";
  p.range_text = "true or false";
  p.meaning = "parameters kept and all-gathered in FP8 (Megatron's --fp8-param-gather)";
  e.parameters.push_back(p);
  for (const char* end : {"start", "end"}) {
    p = ParameterSpec{};
    p.path = fmt::format("/training/fp8/bf16_layers_at_{}", end);
    p.unit = "layers";
    p.default_value = "0";
    p.min = 0;
    p.max = 1 << 16;
    p.meaning = fmt::format("transformer layers at the {} kept in bf16", end);
    e.parameters.push_back(p);
  }
  return e;
}

}  // namespace

Fp8Spec fp8_with_recipe(const Fp8Spec& from, cost::QuantRecipe recipe) {
  if (recipe == from.recipe) return from;
  Fp8Spec f;
  f.recipe = recipe;
  if (recipe == cost::QuantRecipe::kNone) return f;
  const auto library = cost::quant_recipe_info(recipe).library;
  const bool same_library =
      from.enabled() && cost::quant_recipe_info(from.recipe).library == library;
  if (recipe == cost::QuantRecipe::kTorchaoRowwise) f.format = Fp8Format::kE4m3;
  if (library == cost::QuantLibrary::kTransformerEngine && same_library) f.format = from.format;
  // param_gather: the same library's gather (torchao's only with tensorwise).
  f.param_gather = same_library && from.param_gather &&
                   (library == cost::QuantLibrary::kTransformerEngine ||
                    recipe == cost::QuantRecipe::kTorchaoTensorwise);
  if (recipe != cost::QuantRecipe::kDelayed) {  // delayed refuses bf16 layers (bf16_layers_fit)
    f.bf16_layers_at_start = from.bf16_layers_at_start;
    f.bf16_layers_at_end = from.bf16_layers_at_end;
  }
  return f;
}

std::vector<Entry> precision_entries() {
  return {sixteen_or_32(cost::Dtype::kBf16, "bf16 GEMMs and activations, fp32 master weights"),
          sixteen_or_32(cost::Dtype::kFp16,
                        "fp16 GEMMs and activations, fp32 master weights, loss scaling"),
          sixteen_or_32(cost::Dtype::kFp32, "fp32 throughout (TF32 tensor cores not assumed)"),
          fp8(cost::QuantRecipe::kDelayed,
              "TE DelayedScaling: per-tensor scales from an amax history; one fused cast(+"
              "transpose) per operand; FP8 weights cached over micro-batches",
              kTe),
          fp8(cost::QuantRecipe::kTensorwise,
              "TE Float8CurrentScaling: per-tensor scales from the current amax (an extra read "
              "per operand)",
              kTe),
          fp8(cost::QuantRecipe::kBlockwise,
              "TE Float8BlockScaling: 1x128 activation and 128x128 weight blocks, both copies "
              "quantised from bf16 (DeepSeek-V3's recipe)",
              "DeepSeek-AI 2024, DeepSeek-V3, arXiv 2412.19437 sec. 3.3; NVIDIA Transformer "
              "Engine"),
          fp8(cost::QuantRecipe::kMxfp8,
              "TE MXFP8BlockScaling (Blackwell): 32-element blocks with E8M0 scales, both copies "
              "quantised from bf16",
              "Rouhani et al. 2023, Microscaling Data Formats, arXiv 2310.10537; OCP MX v1.0"),
          fp8(cost::QuantRecipe::kTorchaoTensorwise,
              "torchao float8 (torchtitan), dynamic per-tensor scales; weights recast every "
              "micro-batch, bf16 input saved",
              "Or et al. 2025, TorchAO, arXiv 2507.16099 (torchao/float8)"),
          fp8(cost::QuantRecipe::kTorchaoRowwise,
              "torchao float8 rowwise (torchtitan's default): per-row scales, a bf16 transpose "
              "per operand",
              "Or et al. 2025, TorchAO, arXiv 2507.16099 (torchao/float8)")};
}

}  // namespace parasim::strat
