#pragma once
// parasim::exporter FP8 — training.precision "fp8" and training.fp8 (recipe, format,
// param_gather, bf16_layers_at_start/end; strategies/input/scenario.hpp Fp8Spec) in every export.
// Each target maps the recipes its trainer runs and refuses the others, naming the trainers that
// run them (docs/export.md, "FP8"):
//
//   megatron    megatron-core 0.19.2 runs Transformer Engine's recipes: --fp8-format,
//               --fp8-recipe delayed|tensorwise|blockwise|mxfp8 (core/transformer/
//               transformer_config.py:566-579; core/fp8_utils.py get_fp8_recipe),
//               --fp8-param-gather (training/arguments.py:1935-1937), --first-last-layers-bf16
//               --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16
//               (transformer_config.py:628-637). torchao's recipes are refused.
//   torchtitan  torchao's float8 and MX: 0.2.2's [model] converters "quantize.linear.float8" /
//               "quantize.linear.mx" (+ "quantize.grouped_mm.*" for experts) and their TOML
//               sections (config/job_config.py:731-808); 0.3.0's Float8LinearConverter /
//               MXFP8LinearConverter configs, which live in the config_registry function
//               (Trainer.Config.model_spec is tyro.conf.Suppress: no command-line setting), so
//               the export states them. Transformer Engine's recipes are refused, and
//               torchao-tensorwise on 0.3.0 (its Float8LinearConverter offers rowwise only).
//   deepspeed   refused: DeepSpeed 0.19.8's config has no FP8 training; FP8 runs through
//               Transformer Engine in the model's code.
//   shampoo     an optimizer constructor: /training is not its business (shampoo_export.cpp).

#include <string>

#include "planner/export/export_common.hpp"
#include "planner/export/torchtitan_experts.hpp"
#include "planner/export/torchtitan_settings.hpp"

namespace parasim::exporter {

// The targets that run `recipe` as parasim costs it, for a refusal's "supported by".
std::string fp8_supported_by(cost::QuantRecipe recipe);

// Without FP8: /training/fp8 recorded unused, true. With FP8: false, nothing recorded (the
// caller maps or refuses it).
bool covered_without_fp8(const strat::Scenario& s, ExportContext& c);

// /training/precision and /training/fp8 refused: FP8 training, which the target cannot turn on
// (`why`); the closest is bf16 training.
void refuse_fp8(const strat::Scenario& s, ExportContext& c, const std::string& why);

// Megatron-LM: the --fp8-* flags (after --bf16, which FP8 training keeps: the activations, the
// attention and the head stay bf16), and the ledger of /training/fp8 (the Megatron export
// records /training/precision).
void map_megatron_fp8(const strat::Scenario& s, ExportContext& c, ArgList& a);

// torchtitan `version` ("0.3.0" or "0.2.2"): 0.2.2's converters and quantize sections into
// `out`; 0.3.0's converter configs as a note (the config function), or `model.config` switched to
// the model's float8 config function (deepseek_v3_671b_float8). Does not record
// /training/precision (the torchtitan export maps mixed_precision_param).
void map_torchtitan_fp8(const strat::Scenario& s, ExportContext& c, Settings& out,
                        const std::string& version, TorchtitanModel& model);

}  // namespace parasim::exporter
