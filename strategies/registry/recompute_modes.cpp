// Activation recomputation: Korthikanti's three modes, Megatron-core's recompute modules and
// torchtitan's per-op selective checkpointing (costmodel/activation_checkpointing.hpp,
// docs/activation-checkpointing.md).
#include <fmt/format.h>

#include <algorithm>

#include "costmodel/precision/quantization.hpp"
#include "strategies/layers/checkpoint_groups.hpp"
#include "strategies/registry/kind_lists.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {
namespace {

Entry entry(const std::string& name, const std::string& description, const std::string& paper,
            cost::Recompute traits) {
  Entry e;
  e.kind = EntryKind::kRecompute;
  e.name = e.value = name;
  e.description = description;
  e.paper = paper;
  e.builder = "layer_program.cpp: transformer_layer_program";
  e.traits = traits;
  return e;
}

void modules_need_selective(const Scenario& s, cost::Diagnostics& d) {
  if (!(s.training.recompute_modules == cost::RecomputeModules{})) {
    d.add("/training/recompute_modules",
          "recompute_modules applies to \"recompute\": \"selective\" only (Megatron's "
          "--recompute-modules with --recompute-granularity selective)");
  }
}

// moe, moe_act and shared_experts act on MoE layers (moe_layer.hpp), moe_act in 16 bits;
// mla_up_proj on multi-head latent attention (mla_attention.hpp).
void moe_modules_modelled(const Scenario& s, cost::Diagnostics& d) {
  const auto& m = s.training.recompute_modules;
  const auto& moe = s.model.moe;
  if (m.mla_up_proj && !s.model.mla.enabled()) {
    d.add("/training/recompute_modules",
          "\"mla_up_proj\" recomputes multi-head latent attention's up projections: the model "
          "has none (model.mla)");
  }

  if ((m.moe || m.moe_act || m.shared_experts) && !moe.enabled()) {
    d.add("/training/recompute_modules",
          "\"moe\", \"moe_act\" and \"shared_experts\" recompute MoE layers or their parts: the "
          "model has none (model.moe)");
    return;
  }
  if (m.shared_experts && moe.shared_experts == 0) {
    d.add("/training/recompute_modules",
          "\"shared_experts\" recomputes the shared experts: the model has none "
          "(model.moe.shared_experts)");
  }
  // Megatron recomputes the shared experts only when they are not overlapped (moe_layer.py).
  if (m.shared_experts && s.parallel.moe_shared_expert_overlap) {
    d.add("/training/recompute_modules",
          "\"shared_experts\" has no effect with parallel.moe_shared_expert_overlap (Megatron "
          "recomputes the shared experts only when they are not overlapped, moe_layer.py): drop "
          "one of the two");
  }
  if (m.moe_act && s.training.fp8.enabled()) {
    d.add("/training/recompute_modules",
          "\"moe_act\" is modelled without FP8 (Megatron then keeps fc2's original input and "
          "quantises it again in the backward: experts.py, set_save_original_input)");
  }
}

// mlp and layernorm are modelled for dense layers in bf16 with Megatron's placement.
void modules_modelled(const Scenario& s, cost::Diagnostics& d) {
  moe_modules_modelled(s, d);
  const auto& m = s.training.recompute_modules;
  if (!m.mlp && !m.layernorm) return;
  const char* what = s.model.moe.enabled()      ? "a mixture of experts"
                     : s.model.mla.enabled()    ? "multi-head latent attention"
                     : s.training.fp8.enabled() ? "FP8 linears"
                     : s.parallel.tp_placement != TpPlacement::kMegatron ? "this tp_placement"
                     : s.parallel.cp > 1                                 ? "context parallelism"
                                                                         : nullptr;
  if (what != nullptr) {
    d.add("/training/recompute_modules",
          fmt::format("the \"mlp\" and \"layernorm\" modules are modelled for dense layers in bf16 "
                      "with Megatron's tensor parallelism, not with {} (Megatron's MoE and FP8 "
                      "paths recompute differently: transformer_layer.py)",
                      what));
  }
}

// torchtitan's per-op policy is modelled for its dense blocks as torchtitan builds them.
void per_op_modelled(const Scenario& s, cost::Diagnostics& d) {
  const auto& m = s.model;
  const std::string why = "torchtitan's per-op checkpointing is modelled for dense blocks ";
  if (m.moe.enabled()) {
    d.add("/model/moe", why +
                            "(MoE blocks: router force-recomputed, grouped GEMMs outside the "
                            "save list and saved all-to-all outputs are not modelled)");
  }
  if (m.mla.enabled()) d.add("/model/mla", why + "(not multi-head latent attention)");
  if (s.training.attention != AttentionKind::kFlash) {
    d.add("/training/attention", why + "with SDPA's flash kernel: \"attention\": \"flash\"");
  }
  if (m.dropout) d.add("/model/dropout", why + "without dropout (torchtitan's models have none)");
  if (m.linear_bias || m.qkv_bias) {
    d.add("/model", why +
                        "without linear biases (a biased linear runs as addmm, which the "
                        "policy saves without counting it among the mms)");
  }
  if (s.training.fp8.enabled() &&
      cost::quant_recipe_info(s.training.fp8.recipe).library != cost::QuantLibrary::kTorchao) {
    d.add("/training/fp8/recipe",
          why + "in bf16 or with torchao's float8 (torchtitan's): Transformer Engine's linears "
                "are fused autograd functions whose GEMMs the policy does not see");
  }
  if (s.training.precision == cost::Dtype::kFp32) {
    d.add("/training/precision", why + "in bf16 or fp16 (its saved tensors are counted at 2 bytes)");
  }
  if (s.parallel.cp > 1) d.add("/parallel/cp", why + "without context parallelism");
  if (s.parallel.tp_placement != TpPlacement::kMegatron) {
    d.add("/parallel/tp_placement", why + "with plain tensor parallelism");
  }
}

void method_needs_full(const Scenario& s, cost::Diagnostics& d) {
  const char* why = "applies to \"recompute\": \"full\" only (Megatron's --recompute-method and "
                    "--recompute-num-layers with --recompute-granularity full; torchtitan's "
                    "every-N-th block checkpointed whole)";
  if (s.training.recompute_method != cost::RecomputeMethod::kUniform) {
    d.add("/training/recompute_method", fmt::format("recompute_method {}", why));
  }
  if (s.training.recompute_num_layers != 1) {
    d.add("/training/recompute_num_layers", fmt::format("recompute_num_layers {}", why));
  }
}

// Megatron's groups (checkpoint_groups.hpp) are modelled for the dense layers Megatron runs them
// on, through one path of the builder and the screen.
void groups_modelled(const Scenario& s, cost::Diagnostics& d) {
  const TrainingSpec& t = s.training;
  if (!grouped_recompute(t)) return;
  const bool every = t.recompute_method == cost::RecomputeMethod::kEveryNth;
  const std::string why =
      every ? std::string("recompute_method every-nth (torchtitan 0.2.2's selective_ac_option N) "
                          "is modelled ")
            : std::string("recompute_method block or recompute_num_layers > 1 (Megatron's "
                          "grouped full recompute) is modelled ");
  if (s.model.moe.enabled()) d.add("/model/moe", why + "for dense layers, not experts");
  if (t.fp8.enabled()) {
    d.add("/training/fp8",
          every ? why + "without FP8 (the layers without recompute would need their own FP8 "
                        "program)"
                : why + "without FP8 (Megatron then skips layers whose input needs no gradient: "
                        "recompute.py's recompute_skip_num_layers)");
  }
  // One-layer checkpoints gather a sharded layer once for its rerun and backward; Megatron's
  // groups would rerun layers whose parameters are resharded.
  if (!every && (s.parallel.zero_stage == 3 || s.parallel.fsdp2.enabled)) {
    d.add("/parallel/zero_stage",
          why + "without ZeRO-3 or FSDP2 (Megatron's method; those trainers checkpoint per layer)");
  }
  // DeepSpeed's ZeRO-3 holds gathered modules by whether the layer is checkpointed at all
  // (zero3_resident_elements); torchtitan shards with FSDP2.
  if (every && s.parallel.zero_stage == 3 && !s.parallel.fsdp2.enabled) {
    d.add("/parallel/zero_stage",
          why + "with FSDP2 (sharding \"fsdp2\") or ZeRO 0-2, not DeepSpeed's ZeRO-3");
  }
  if (every && s.parallel.chunks > 1) {
    d.add("/parallel/chunks",
          why + "with one model chunk per rank (torchtitan's counter runs on across a rank's "
                "chunks)");
  }
  if (splits_weight_gradient(s.parallel.schedule) ||
      (s.parallel.schedule == PipelineSchedule::kPaci && s.parallel.paci_mode == PaciMode::kMem)) {
    d.add("/parallel/schedule",
          why + "with schedules whose backward is not split into B and W and without PACI's mem "
                "mode (which recomputes the whole stage already)");
  }
  if (s.parallel.tp_placement != TpPlacement::kMegatron) {
    d.add("/parallel/tp_placement", why + "with Megatron's tensor parallelism");
  }
  if (s.model.low_rank.enabled()) d.add("/model/low_rank", why + "for full-rank layers");
  if (t.recompute_method == cost::RecomputeMethod::kBlock) {
    int most = 0;  // Megatron counts a model chunk's own layers (transformer_block.py, len(layers))
    for (int vs = 0; vs < s.parallel.pp * s.parallel.chunks; ++vs) {
      most = std::max(most, s.virtual_stage_layers(vs));
    }
    if (t.recompute_num_layers > most) {
      d.add("/training/recompute_num_layers",
            fmt::format("block checkpoints the first recompute_num_layers layers of each (virtual) "
                        "stage, which holds at most {} here, not {} (all checkpointed is "
                        "\"recompute_method\": \"uniform\")",
                        most, t.recompute_num_layers));
    }
  }
}

}  // namespace

std::vector<Entry> recompute_entries() {
  Entry selective =
      entry("selective",
            "Megatron's selective recompute: the modules in recompute_modules (default the "
            "attention core: softmax, dropout, scores) recomputed inside the backward",
            "Korthikanti et al. 2022, arXiv 2205.05198; megatron-core 0.19.2 recompute_modules",
            cost::Recompute::kSelective);
  ParameterSpec modules;
  modules.path = "/training/recompute_modules";
  modules.default_value = "[\"core_attn\"]";
  // megatron/core/transformer/transformer_config.py (0.19.2), recompute_modules' choices.
  modules.choices = {"core_attn",      "mlp",        "layernorm", "moe", "moe_act",
                     "shared_experts", "mla_up_proj"};
  modules.list = true;
  modules.meaning =
      "Megatron's --recompute-modules: core_attn, mlp (dense MLP from its input), "
      "layernorm (both norms' outputs discarded), moe (the MoE layer checkpointed), moe_act "
      "(the routed experts' activation output discarded), shared_experts (the shared experts "
      "checkpointed), mla_up_proj (MLA's up projections and RoPE rerun before the core's "
      "backward)";
  modules.when_not_taken = modules_need_selective;
  selective.parameters = {modules};
  selective.rules = {modules_modelled};
  Entry per_op = entry("per-op",
                       "torchtitan's per-op selective AC: GEMM outputs saved but every second, "
                       "SDPA and reduce-scatter outputs saved, the rest rerun in the backward",
                       "torchtitan 2025, arXiv 2410.06511; activation_checkpoint.py (0.3.0)",
                       cost::Recompute::kPerOp);
  per_op.rules = {per_op_modelled};
  Entry full = entry("full",
                     "only each checkpoint's input kept; its forward rerun in the backward (groups "
                     "of layers as Megatron's recompute_method and recompute_num_layers say)",
                     "Chen et al. 2016, arXiv 1604.06174; megatron-core 0.19.2 recompute.py",
                     cost::Recompute::kFull);
  ParameterSpec method;
  method.path = "/training/recompute_method";
  method.default_value = "uniform";
  // uniform, block: transformer_config.py (0.19.2), recompute_method; every-nth: torchtitan
  // 0.2.2's activation_checkpoint.selective_ac_option N.
  method.choices = {"uniform", "block", "every-nth"};
  method.meaning =
      "Megatron's --recompute-method: uniform checkpoints groups of recompute_num_layers "
      "layers, block the first recompute_num_layers layers of each (virtual) stage; every-nth, "
      "torchtitan 0.2.2's selective_ac_option N: every recompute_num_layers-th layer of a rank "
      "alone";
  method.when_not_taken = method_needs_full;
  ParameterSpec layers;
  layers.path = "/training/recompute_num_layers";
  layers.unit = "layers";
  layers.default_value = "1";
  layers.min = 1;
  layers.max = 1 << 16;
  layers.meaning = "Megatron's --recompute-num-layers: a uniform group's layers, or how many "
                   "layers block checkpoints; every-nth's N";
  layers.when_not_taken = nullptr;  // method_needs_full reports both
  full.builder = "layer_program.cpp: transformer_layer_program; checkpoint_groups.cpp: "
                 "stage_checkpoints";
  full.parameters = {method, layers};
  full.rules = {groups_modelled};
  return {entry("none", "every activation kept for the backward",
                "Korthikanti et al. 2022, arXiv 2205.05198", cost::Recompute::kNone),
          selective, full, per_op};
}

}  // namespace parasim::strat
