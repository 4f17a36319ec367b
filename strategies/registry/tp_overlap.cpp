// Overlap of the tensor-parallel collectives with the GEMMs beside them (parallel.tp_comm_overlap):
// torch's AsyncTP as torchtitan enables it, and Transformer Engine's userbuffers as Megatron-LM's
// --tp-comm-overlap enables it. The mechanism in strategies/layers/tp_overlap.hpp;
// docs/tp-overlap.md.
#include "costmodel/precision/quantization.hpp"
#include "strategies/layers/tp_overlap.hpp"

#include <fmt/format.h>

#include "strategies/registry/kind_lists.hpp"

namespace parasim::strat {
namespace {

// Both: the collectives they chunk are sequence parallelism's, over tp > 1 ranks.
void sequence_parallel_tp(const Scenario& s, cost::Diagnostics& d) {
  const char* name = tp_comm_overlap_name(s.parallel.tp_comm_overlap);
  if (s.parallel.tp < 2) {
    d.add("/parallel/tp", fmt::format("tp_comm_overlap \"{}\" overlaps tensor-parallel "
                                      "collectives: it needs tp > 1 (got {})",
                                      name, s.parallel.tp));
  }
  if (!s.parallel.sequence_parallel) {
    d.add("/parallel/sequence_parallel",
          fmt::format("tp_comm_overlap \"{}\" chunks sequence parallelism's all-gathers and "
                      "reduce-scatters: it needs sequence_parallel true",
                      name));
  }
}

// What the layer programs do not chunk (tp_overlap.hpp), refused rather than approximated.
// torchtitan's block chunks around its context-parallel attention; Megatron's layer does not.
void modelled_layers(const Scenario& s, cost::Diagnostics& d) {
  const bool titan_block = s.training.framework.kernels == LayerKernels::kTorchtitan &&
                           !s.model.moe.enabled() && !s.model.mla.enabled();
  if (s.parallel.cp > 1 &&
      !(titan_block && s.parallel.tp_comm_overlap == TpCommOverlap::kAsyncTp)) {
    d.add("/parallel/cp",
          "tp_comm_overlap with context parallelism is modelled for async-tp in torchtitan's "
          "block only (Megatron's layer program does not chunk around its context-parallel "
          "attention yet)");
  }
  if (s.model.mla.enabled()) {
    d.add("/model/mla", "tp_comm_overlap with multi-head latent attention is not modelled yet");
  }
  if (s.parallel.tp_placement != TpPlacement::kMegatron || s.model.low_rank.enabled()) {
    d.add("/parallel/tp_placement",
          "tp_comm_overlap chunks Megatron's tensor-parallel layout (tp_placement \"megatron\", "
          "no low-rank layers)");
  }
}

// FP8 linears: the overlap of the library that quantises them (tp_overlap.hpp).
// AsyncTP chunks torchao's float8 _scaled_mm (torchtitan's float8 converters); Transformer
// Engine's modules are not torch.compile's to rewrite.
void torchao_fp8(const Scenario& s, cost::Diagnostics& d) {
  const cost::QuantRecipe r = s.training.fp8.recipe;
  if (s.training.fp8.enabled() &&
      cost::quant_recipe_info(r).library != cost::QuantLibrary::kTorchao) {
    d.add("/training/fp8/recipe",
          fmt::format("tp_comm_overlap \"async-tp\" is torch.compile's pass over torchao's float8 "
                      "linears (\"torchao-tensorwise\", \"torchao-rowwise\"); recipe \"{}\" is "
                      "Transformer Engine's, whose overlap is \"userbuffers\"",
                      cost::quant_recipe_name(r)));
  }
}

// Userbuffers communicates Transformer Engine's FP8 tensors, per-tensor and MXFP8 ones only
// (module/base.py fill_userbuffers_buffer_for_all_gather: "Unsupported quantizer for
// Userbuffers" otherwise, TE @ d0067d0d).
void userbuffers_fp8(const Scenario& s, cost::Diagnostics& d) {
  const cost::QuantRecipe r = s.training.fp8.recipe;
  if (!s.training.fp8.enabled()) return;
  if (cost::quant_recipe_info(r).library != cost::QuantLibrary::kTransformerEngine) {
    d.add("/training/fp8/recipe",
          fmt::format("tp_comm_overlap \"userbuffers\" is Transformer Engine's: recipe \"{}\" is "
                      "torchao's (Megatron-LM quantises with TE: \"delayed\", \"tensorwise\", "
                      "\"mxfp8\")",
                      cost::quant_recipe_name(r)));
  } else if (r == cost::QuantRecipe::kBlockwise) {
    d.add("/training/fp8/recipe",
          "tp_comm_overlap \"userbuffers\" cannot communicate blockwise-scaled FP8 tensors "
          "(Transformer Engine: \"Unsupported quantizer for Userbuffers\"): use recipe "
          "\"delayed\", \"tensorwise\" or \"mxfp8\", or tp_comm_overlap \"none\"");
  }
}

// torchtitan's block gets AsyncTP from torch.compile's micro-pipeline TP pass, so torchtitan
// 0.3.0 refuses it without compile (config/configs.py, CompileConfig.__post_init__: "Async TP
// requires 'model' in --compile.components and --compile.enable").
void compiled_torchtitan_block(const Scenario& s, cost::Diagnostics& d) {
  const FrameworkSpec& fw = s.training.framework;
  if (fw.kernels == LayerKernels::kTorchtitan && !fw.compile.compiles_blocks()) {
    d.add("/training/framework/compile",
          fmt::format("tp_comm_overlap \"async-tp\" is a torch.compile pass over torchtitan's "
                      "blocks (torchtitan requires compile.enable with \"model\" in "
                      "compile.components): {}",
                      fw.compile.enabled ? "add \"model\" to training.framework.compile.components"
                                         : "set training.framework.compile true"));
  }
}

void megatron_only(const Scenario& s, cost::Diagnostics& d) {
  if (s.training.framework.name != "megatron-lm") {
    d.add("/training/framework",
          fmt::format("tp_comm_overlap \"userbuffers\" is Megatron-LM's --tp-comm-overlap "
                      "(Transformer Engine): it needs training.framework \"megatron-lm\" (got "
                      "\"{}\"); torchtitan's overlap is \"async-tp\"",
                      s.training.framework.name));
  }
  const int sms = s.cluster.device.sm_count;
  if (sms <= detail::kUbCommSms) {
    d.add("/cluster/device/sm_count",
          fmt::format("tp_comm_overlap \"userbuffers\" runs its GEMMs on the SMs its "
                      "communication kernels ({}) leave: it needs the device's SM count (got {})",
                      detail::kUbCommSms, sms));
  }
}

Entry entry(TpCommOverlap id, const std::string& name, const std::string& description,
            const std::string& paper, std::vector<Rule> rules) {
  Entry e;
  e.kind = EntryKind::kTpCommOverlap;
  e.name = e.value = name;
  e.description = description;
  e.paper = paper;
  e.rules = std::move(rules);
  e.builder = id == TpCommOverlap::kNone
                  ? "layer_program.cpp (whole collectives between the GEMMs)"
                  : "tp_overlap.cpp (chunked collectives beside chunked GEMMs)";
  e.traits = TpCommOverlapTraits{.id = id};
  return e;
}

}  // namespace

std::vector<Entry> tp_comm_overlap_entries() {
  return {
      entry(TpCommOverlap::kNone, "none",
            "each all-gather and reduce-scatter whole, before or after its GEMM",
            "Korthikanti et al. 2022, sequence parallelism, arXiv 2205.05198", {}),
      entry(TpCommOverlap::kAsyncTp, "async-tp",
            "torch's AsyncTP, offered by torchtitan (enable_async_tensor_parallel, "
            "with compile): tp chunks per all-gather-matmul and matmul-reduce-scatter, shards "
            "copied by the copy engine over symmetric memory",
            "Wang et al. 2023, overlap communication with dependent computation via "
            "decomposition, ASPLOS 2023",
            {sequence_parallel_tp, modelled_layers, compiled_torchtitan_block, torchao_fp8}),
      entry(
          TpCommOverlap::kUserbuffers, "userbuffers",
          "Transformer Engine's userbuffers (Megatron-LM --tp-comm-overlap, TE's default "
          "methods): ring_exchange AG+GEMM, pipelined GEMM+RS in 4 chunks, bulk overlaps in "
          "the backward; 16 SMs for the pipeline and bulk kernels",
          "Transformer Engine userbuffers (NVIDIA, 2023; transformer_engine/pytorch/module/base.py "
          "initialize_ub)",
          {sequence_parallel_tp, modelled_layers, megatron_only, userbuffers_fp8}),
  };
}

}  // namespace parasim::strat
