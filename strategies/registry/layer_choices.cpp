// Choices inside a transformer layer: the attention core and activation recomputation.
#include "strategies/registry/kind_lists.hpp"

namespace parasim::strat {
namespace {

Entry entry(EntryKind kind, const std::string& name, const std::string& description,
            const std::string& paper, const std::string& builder, EntryTraits traits) {
  Entry e;
  e.kind = kind;
  e.name = e.value = name;
  e.description = description;
  e.paper = paper;
  e.builder = builder;
  e.traits = traits;
  return e;
}

}  // namespace

std::vector<Entry> attention_entries() {
  return {entry(EntryKind::kAttention, "unfused",
                "Megatron's core attention: scores and probabilities written to HBM and stored "
                "for the backward (Korthikanti et al.'s activation accounting)",
                "Shoeybi et al. 2019, Megatron-LM, arXiv 1909.08053",
                "attention_core.cpp: attention_core_forward, attention_core_backward", AttentionKind::kUnfused),
          entry(EntryKind::kAttention, "flash",
                "FlashAttention: one fused causal kernel each way (half the core FLOPs), the "
                "backward recomputes the scores, nothing s^2 stored; needed by cp and tsp",
                "Dao et al. 2022, FlashAttention, arXiv 2205.14135; Dao 2023, arXiv 2307.08691",
                "attention_core.cpp: attention_core_forward, attention_core_backward", AttentionKind::kFlash)};
}

std::vector<Entry> recompute_entries() {
  return {entry(EntryKind::kRecompute, "none", "every activation kept for the backward",
                "Korthikanti et al. 2022, arXiv 2205.05198",
                "layer_program.cpp: transformer_layer_program", cost::Recompute::kNone),
          entry(EntryKind::kRecompute, "selective",
                "attention core (softmax, dropout, scores) recomputed inside the backward",
                "Korthikanti et al. 2022, arXiv 2205.05198",
                "layer_program.cpp: transformer_layer_program", cost::Recompute::kSelective),
          entry(EntryKind::kRecompute, "full",
                "only each layer's input kept; the layer's forward rerun in backward",
                "Chen et al. 2016, arXiv 1604.06174",
                "layer_program.cpp: transformer_layer_program", cost::Recompute::kFull)};
}

}  // namespace parasim::strat
