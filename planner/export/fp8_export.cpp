// FP8 training in every export (fp8_export.hpp).
#include "planner/export/fp8_export.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace parasim::exporter {
namespace {

using cost::QuantRecipe;
using strat::Scenario;

const char* recipe_name(QuantRecipe r) {
  return cost::quant_recipe_name(r);
}

bool torchao(QuantRecipe r) {
  return cost::quant_recipe_info(r).library == cost::QuantLibrary::kTorchao;
}

// The transformer layers kept in bf16, 0-based global indices (the first, then the last).
std::vector<int> bf16_layers(const Scenario& s) {
  std::vector<int> out;
  for (int i = 0; i < s.model.layers; ++i) {
    if (!s.training.fp8_layer(i, s.model.layers)) out.push_back(i);
  }
  return out;
}

// torchtitan's FQN filters match by substring (components/quantization/utils.py
// module_filter_fn: `filter_fqn in fqn`, both versions; mx.py's include list alike): "layers.1."
// with its dot is layer 1 only, not layers 10-19 (as 0.3.0's nvfp4_bf16_tail_fqns writes them).
std::string layer_fqn(int layer) {
  return fmt::format("layers.{}.", layer);
}

// Python's list literal of strings: ["a", "b"].
std::string python_list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", \"" : "\"") + v[i] + "\"";
  return out + "]";
}

}  // namespace

std::string fp8_supported_by(QuantRecipe r) {
  switch (r) {
    case QuantRecipe::kDelayed:
    case QuantRecipe::kTensorwise:
    case QuantRecipe::kBlockwise:
      return fmt::format("megatron (--fp8-recipe {})", recipe_name(r));
    case QuantRecipe::kMxfp8:
      return "megatron (--fp8-recipe mxfp8), torchtitan (torchao's MX converters)";
    case QuantRecipe::kTorchaoTensorwise:
      return "torchtitan 0.2 ([quantize.linear.float8] without recipe_name)";
    case QuantRecipe::kTorchaoRowwise:
      return "torchtitan (0.3: Float8LinearConverter recipe_name rowwise; 0.2: "
             "[quantize.linear.float8] recipe_name rowwise)";
    case QuantRecipe::kNone:
      break;
  }
  return "no export target";
}

// Whether the export compiles the blocks torchao's kernels want compiled (torchtitan_export.cpp,
// map_compile writes [compile] from training.framework.compile).
namespace {
std::string compile_state(const Scenario& s) {
  return s.training.framework.compile.enabled
             ? " (written: training.framework.compile is on)"
             : "; this scenario simulates eager blocks (set training.framework.compile to "
               "simulate and export the compiled ones)";
}
}  // namespace

bool covered_without_fp8(const Scenario& s, ExportContext& c) {
  if (s.training.fp8.enabled()) return false;
  c.unused("/training/fp8", "no FP8 (training.precision is not fp8)");
  return true;
}

void refuse_fp8(const Scenario& s, ExportContext& c, const std::string& why) {
  const auto& f = s.training.fp8;
  c.cannot("/training/precision",
           fmt::format("FP8 training ({} recipe; {})", recipe_name(f.recipe), why),
           fp8_supported_by(f.recipe), "bf16 training (no FP8)");
  c.part_of_refused("/training/fp8", "part of the FP8 training refused at /training/precision");
}

void map_megatron_fp8(const Scenario& s, ExportContext& c, ArgList& a) {
  if (covered_without_fp8(s, c)) return;
  const auto& f = s.training.fp8;
  std::string recipe = recipe_name(f.recipe);
  if (torchao(f.recipe)) {
    c.cannot("/training/fp8/recipe",
             fmt::format("torchao's float8 recipe {} (megatron-core 0.19.2 runs Transformer "
                         "Engine's recipes: delayed, tensorwise, blockwise, mxfp8; "
                         "core/fp8_utils.py get_fp8_recipe)",
                         recipe),
             fp8_supported_by(f.recipe),
             "--fp8-recipe tensorwise (Transformer Engine's per-tensor current scaling)");
    c.part_of_refused("/training/fp8/format", "part of the recipe refused at /training/fp8/recipe");
    recipe = "tensorwise";
  } else {
    c.mapped("/training/fp8/format", "--fp8-format");
  }
  a.add("--fp8-format", strat::fp8_format_name(f.format));
  a.add("--fp8-recipe", recipe);
  if (f.recipe == QuantRecipe::kDelayed) {
    // Transformer Engine's DelayedScaling defaults (amax_history_len 1024, amax_compute_algo
    // "max"); megatron-core's flags default to 1 and most_recent (transformer_config.py:600-608)
    // and would override them.
    a.add("--fp8-amax-history-len", "1024");
    a.add("--fp8-amax-compute-algo", "max");
    c.mapped("/training/fp8/recipe",
             "--fp8-recipe delayed with --fp8-amax-history-len 1024 --fp8-amax-compute-algo max: "
             "Transformer Engine's DelayedScaling defaults (megatron-core's own flags default to "
             "1 and most_recent); they do not change parasim's cost, which prices one cast per "
             "operand with the stored scale whatever the history's length");
  } else if (!torchao(f.recipe)) {
    c.mapped("/training/fp8/recipe", "--fp8-recipe");
  }
  if (!f.param_gather) {
    c.mapped("/training/fp8/param_gather", "off (no --fp8-param-gather)");
  } else if (torchao(f.recipe)) {
    c.part_of_refused("/training/fp8/param_gather",
                      "part of the recipe refused at /training/fp8/recipe");
  } else if (s.parallel.zero_stage == 0) {
    // arguments.py:1060-1062: the distributed optimizer, torch FSDP2 or Megatron-FSDP.
    c.cannot("/training/fp8/param_gather",
             "an FP8 parameter all-gather without a sharded optimizer (megatron-core's "
             "--fp8-param-gather needs --use-distributed-optimizer or FSDP)",
             "megatron with parallel.zero_stage 1 or 2", "bf16 parameters (no --fp8-param-gather)");
  } else {
    a.add("--fp8-param-gather");
    c.mapped("/training/fp8/param_gather", "--fp8-param-gather");
  }
  if (f.bf16_layers_at_start == 0 && f.bf16_layers_at_end == 0) {
    c.mapped("/training/fp8/bf16_layers_at_start", "none (no --first-last-layers-bf16)");
    c.mapped("/training/fp8/bf16_layers_at_end", "none (no --first-last-layers-bf16)");
    return;
  }
  if (f.recipe == QuantRecipe::kDelayed) {
    // transformer_config.py:1400-1403 raises (the registry refuses it before an export).
    c.cannot("/training/fp8/bf16_layers_at_start",
             "bf16 first/last layers with delayed scaling (megatron-core raises: one autocast "
             "wraps the block, the amax reduction would break)",
             "megatron with --fp8-recipe tensorwise, blockwise or mxfp8", "every layer in FP8");
    c.part_of_refused("/training/fp8/bf16_layers_at_end",
                      "part of /training/fp8/bf16_layers_at_start");
    return;
  }
  // Both counts written: megatron-core's defaults are 1 and 1 (transformer_config.py:631-637).
  a.add("--first-last-layers-bf16");
  a.add("--num-layers-at-start-in-bf16", std::to_string(f.bf16_layers_at_start));
  a.add("--num-layers-at-end-in-bf16", std::to_string(f.bf16_layers_at_end));
  c.mapped("/training/fp8/bf16_layers_at_start",
           "--first-last-layers-bf16 --num-layers-at-start-in-bf16");
  c.mapped("/training/fp8/bf16_layers_at_end",
           "--first-last-layers-bf16 --num-layers-at-end-in-bf16");
}

void map_torchtitan_fp8(const Scenario& s, ExportContext& c, Settings& out,
                        const std::string& version, TorchtitanModel& model) {
  if (covered_without_fp8(s, c)) return;
  const auto& f = s.training.fp8;
  const bool v03 = version == "0.3.0";
  const bool experts = model.module != "llama3";  // one of torchtitan's MoE flavours
  const std::vector<int> bf16 = bf16_layers(s);

  // The recipe written: torchao's own, or the closest where the scenario's is not torchtitan's.
  QuantRecipe r = f.recipe;
  bool recipe_refused = false;
  switch (f.recipe) {
    case QuantRecipe::kDelayed:
    case QuantRecipe::kTensorwise:
    case QuantRecipe::kBlockwise:
      r = v03 || f.recipe == QuantRecipe::kBlockwise ? QuantRecipe::kTorchaoRowwise
                                                     : QuantRecipe::kTorchaoTensorwise;
      c.cannot("/training/fp8/recipe",
               fmt::format("Transformer Engine's {} recipe (torchtitan's float8 training is "
                           "torchao's Float8Linear; it runs no Transformer Engine recipe)",
                           recipe_name(f.recipe)),
               fp8_supported_by(f.recipe),
               fmt::format("torchao's {} recipe", recipe_name(r)));
      recipe_refused = true;
      break;
    case QuantRecipe::kTorchaoTensorwise:
      if (v03) {
        r = QuantRecipe::kTorchaoRowwise;
        c.cannot("/training/fp8/recipe",
                 "torchao's tensorwise float8 recipe (torchtitan 0.3.0's Float8LinearConverter "
                 "offers recipe_name rowwise and rowwise_with_gw_hp only)",
                 fp8_supported_by(f.recipe), "Float8LinearConverter recipe_name rowwise");
        recipe_refused = true;
      }
      break;
    default:
      break;
  }
  const bool mx = r == QuantRecipe::kMxfp8;

  // The model's function in 0.3.0 is fixed for torchtitan's MoE flavours: FP8 maps only where
  // torchtitan has the float8 variant (deepseek_v3_671b_float8: rowwise linears but the head and
  // the router gate, rowwise grouped experts; models/deepseek_v3/config_registry.py).
  if (v03 && experts) {
    std::string why;
    if (model.config != "deepseek_v3_671b") {
      why = fmt::format("torchtitan 0.3.0 sets converters in config functions and has no FP8 "
                        "variant of {}",
                        model.config);
    } else if (r != QuantRecipe::kTorchaoRowwise) {
      why = "torchtitan 0.3.0's only FP8 function for DeepSeek-V3 is deepseek_v3_671b_float8 "
            "(torchao rowwise)";
    } else if (!bf16.empty()) {
      why = "bf16 layers (deepseek_v3_671b_float8 keeps only the head and the router gate in "
            "bf16)";
    } else if (f.param_gather) {
      why = "an FP8 parameter all-gather (torchtitan 0.3.0 has no float8 all-gather)";
    }
    if (!why.empty()) {
      if (!recipe_refused) {
        c.cannot("/training/fp8/recipe", fmt::format("FP8 for this model ({})", why),
                 "torchtitan 0.2 (model.converters with quantize.grouped_mm), megatron",
                 fmt::format("--config {} (bf16)", model.config));
      }
      for (const char* path : {"/training/fp8/format", "/training/fp8/param_gather",
                               "/training/fp8/bf16_layers_at_start",
                               "/training/fp8/bf16_layers_at_end"}) {
        c.part_of_refused(path, "part of the FP8 refused at /training/fp8/recipe");
      }
      return;
    }
    model.config = "deepseek_v3_671b_float8";
    c.mapped("/training/fp8/recipe",
             "--config deepseek_v3_671b_float8: Float8LinearConverter (rowwise) with filter_fqns "
             "[\"lm_head\", \"router.gate\"] and Float8GroupedExpertsConverter (torchao's "
             "dynamic float8 rowwise grouped GEMMs for the experts)");
    c.mapped("/training/fp8/format", "e4m3 (torchao's rowwise recipe)");
    c.mapped("/training/fp8/param_gather", "off (the default)");
    c.mapped("/training/fp8/bf16_layers_at_start", "none");
    c.mapped("/training/fp8/bf16_layers_at_end", "none");
    return;
  }

  // Format: torchao's float8 recipes fix it (the registry checks the scenario's); MX casts every
  // operand to e4m3 (torchao MXLinearConfig: one elem_dtype, float8_e4m3fn for mxfp8).
  if (recipe_refused) {
    c.part_of_refused("/training/fp8/format", "part of the recipe refused at /training/fp8/recipe");
  } else if (mx && f.format == strat::Fp8Format::kHybrid) {
    c.cannot("/training/fp8/format",
             "hybrid FP8 with mxfp8 (E5M2 gradients): torchao's MX casts every operand to e4m3",
             "megatron (--fp8-format hybrid --fp8-recipe mxfp8)", "e4m3 (torchao's MX)");
  } else {
    c.mapped("/training/fp8/format",
             mx ? "e4m3: torchao MX's element dtype"
                : fmt::format("fixed by torchao's {} recipe", recipe_name(r)));
  }

  // The modules kept in bf16: the head (0.3.0 lm_head, 0.2.2 output), the router gate of MoE
  // flavours (as 0.3.0's deepseek_v3_671b_float8 filters it), the bf16 layers.
  std::vector<std::string> skip = {v03 ? "lm_head" : "output"};
  if (experts) skip.push_back("router.gate");
  for (int i : bf16) skip.push_back(layer_fqn(i));
  // 0.3.0's MXFP8LinearConverter takes an include list instead (empty: every Linear, the head
  // too): the FP8 layers ("layers." when they all are).
  std::vector<std::string> include;
  if (bf16.empty()) {
    include.push_back("layers.");
  } else {
    for (int i = 0; i < s.model.layers; ++i) {
      if (s.training.fp8_layer(i, s.model.layers)) include.push_back(layer_fqn(i));
    }
  }
  const std::string bf16_detail =
      bf16.empty() ? "none"
                   : fmt::format("layers {} kept out of the converter by FQN (\"layers.N.\")",
                                 [&] {
                                   std::string t;
                                   for (int i : bf16) t += (t.empty() ? "" : ", ") +
                                                           std::to_string(i);
                                   return t;
                                 }());

  // Parameter all-gather in FP8: 0.2.2's tensorwise float8 with FSDP only (float8.py: the flag is
  // dp_shard_enabled and enable_fsdp_float8_all_gather; an assertion refuses it with a
  // recipe_name); 0.3.0 has no such setting.
  const bool shard = s.parallel.zero_stage == 3 && s.parallel.dp > 1;
  bool gather = false;
  if (!f.param_gather) {
    c.mapped("/training/fp8/param_gather", "off (the default)");
  } else if (recipe_refused) {
    c.part_of_refused("/training/fp8/param_gather",
                      "part of the recipe refused at /training/fp8/recipe");
  } else if (!v03 && r == QuantRecipe::kTorchaoTensorwise && shard) {
    gather = true;
    c.mapped("/training/fp8/param_gather",
             "quantize.linear.float8.enable_fsdp_float8_all_gather, "
             "precompute_float8_dynamic_scale_for_fsdp");
  } else {
    c.cannot("/training/fp8/param_gather",
             v03 ? "an FP8 parameter all-gather (torchtitan 0.3.0's float8 converters have none)"
                 : "an FP8 parameter all-gather other than FSDP2's with torchao tensorwise "
                   "(torchtitan 0.2.2 enables it for tensorwise with data_parallel_shard_degree "
                   "> 1 only)",
             "torchtitan 0.2 (torchao-tensorwise, ZeRO-3), megatron (--fp8-param-gather)",
             "bf16 parameter all-gather");
  }

  if (v03) {
    // 0.3.0: Trainer.Config.model_spec is not a command-line setting (tyro.conf.Suppress,
    // trainer.py); the converters go into the config function's model_registry(...).
    const std::string converter =
        mx ? fmt::format("MXFP8LinearConverter.Config(fqns={})", python_list(include))
           : fmt::format("Float8LinearConverter.Config(recipe_name=\"rowwise\", filter_fqns={})",
                         python_list(skip));
    const std::string note = fmt::format(
        "FP8 ({}): torchtitan 0.3 takes its converters from the config function (model_spec "
        "is no command-line setting): model_registry(FLAVOR, converters=[{}]) in the function "
        "--config names{}; torchao's kernels want torch.compile (compile.enable, and "
        "model_compile_enabled=True in the converter), which parasim's torchao costs assume{}",
        mx ? "torchao's MX, mxfp8_cublas: the MX format of Transformer Engine's MXFP8BlockScaling, "
             "torchao's kernels"
           : "torchao float8 rowwise",
        converter, mx ? " (SM100: Blackwell)" : "", compile_state(s));
    if (!recipe_refused) c.stated("/training/fp8/recipe", note);
    else c.note(note);
    c.mapped("/training/fp8/bf16_layers_at_start",
             mx ? "the converter's fqns (an include list of the FP8 layers)"
                : "the converter's filter_fqns: " + bf16_detail);
    c.mapped("/training/fp8/bf16_layers_at_end",
             mx ? "the converter's fqns (an include list of the FP8 layers)"
                : "the converter's filter_fqns: " + bf16_detail);
    return;
  }

  // 0.2.2: [model] converters and the [quantize.*] sections (config/job_config.py:731-808).
  std::vector<std::string> converters = {mx ? "quantize.linear.mx" : "quantize.linear.float8"};
  const std::string linear = mx ? "quantize.linear.mx" : "quantize.linear.float8";
  if (r == QuantRecipe::kTorchaoRowwise) out.set(linear, "recipe_name", "rowwise");
  out.set(linear, "filter_fqns", skip);
  if (gather) {
    out.set(linear, "enable_fsdp_float8_all_gather", true);
    out.set(linear, "precompute_float8_dynamic_scale_for_fsdp", true);
  }
  std::string recipe_detail =
      mx ? "model.converters quantize.linear.mx (torchao's MX, recipe mxfp8_cublas: the MX format "
           "of Transformer Engine's MXFP8BlockScaling, torchao's kernels), filter_fqns"
         : fmt::format("model.converters quantize.linear.float8{}, filter_fqns",
                       r == QuantRecipe::kTorchaoRowwise ? " recipe_name rowwise"
                                                         : " (no recipe_name: tensorwise)");
  if (experts) {
    // The experts' grouped GEMMs: Float8GroupedMMConverter (torchao's dynamic float8 rowwise,
    // float8.py) asserts pipeline_parallel_degree 1 and context_parallel_degree 1;
    // MXGroupedMMConverter (mxfp8). "moe.experts", not "experts", which shared_experts holds too.
    std::vector<std::string> fqns;
    if (bf16.empty()) {
      fqns.push_back("moe.experts");
    } else {
      for (const std::string& layer : include) fqns.push_back(layer + "moe.experts");
    }
    const std::string grouped = mx ? "quantize.grouped_mm.mx" : "quantize.grouped_mm.float8";
    converters.push_back(grouped);
    out.set(grouped, "fqns", fqns);
    std::string problem;
    if (r == QuantRecipe::kTorchaoTensorwise) {
      problem = "tensorwise float8 experts (torchtitan 0.2.2's Float8GroupedMMConverter is "
                "dynamic float8 rowwise only)";
    } else if (!mx && (s.parallel.pp > 1 || s.parallel.cp > 1)) {
      problem = "float8 experts with pipeline or context parallelism (torchtitan 0.2.2's "
                "Float8GroupedMMConverter asserts pipeline_parallel_degree 1 and "
                "context_parallel_degree 1)";
    }
    if (!problem.empty() && !recipe_refused) {
      c.cannot("/training/fp8/recipe", problem,
               "megatron (the experts' grouped GEMMs in the Transformer Engine recipe)",
               fmt::format("model.converters with {} as written", grouped));
      recipe_refused = true;
    }
    recipe_detail += fmt::format("; the experts: model.converters {}, {}.fqns", grouped, grouped);
  }
  out.set("model", "converters", converters);
  if (!recipe_refused) c.mapped("/training/fp8/recipe", recipe_detail);
  c.mapped("/training/fp8/bf16_layers_at_start",
           fmt::format("{}.filter_fqns: {}", linear, bf16_detail));
  c.mapped("/training/fp8/bf16_layers_at_end",
           fmt::format("{}.filter_fqns: {}", linear, bf16_detail));
  c.note(fmt::format("FP8: torchao's {} (torchtitan needs torchao installed{}); torchao's kernels "
                     "want torch.compile ([compile] enable), which parasim's torchao costs "
                     "assume{}",
                     mx ? "MX (mxfp8)" : fmt::format("float8 {}", recipe_name(r)),
                     mx ? ", SM100: Blackwell" : "", compile_state(s)));
}

}  // namespace parasim::exporter
