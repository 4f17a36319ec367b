// Choices inside a transformer layer: the attention core (recompute modes: recompute_modes.cpp).
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

}  // namespace parasim::strat
