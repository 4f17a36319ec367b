#pragma once
// parasim::exporter Megatron-LM's settings for a mixture of experts and the attention variants
// that come with the MoE presets (megatron-core 0.19.2: the flags of training/arguments.py and
// TransformerConfig / ModelParallelConfig; docs/moe.md). Internal to the Megatron export.

#include "planner/export/export_common.hpp"
#include "planner/export/export_context.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::exporter {

// --kv-channels for a head width other than hidden / heads, --qk-layernorm for per-head
// query/key norms (a norm over all heads has no flag: refused).
void map_megatron_attention_extras(const strat::Scenario& s, ExportContext& c, ArgList& a);
// --num-experts, --moe-router-topk, --moe-ffn-hidden-size, shared experts, --moe-layer-freq,
// --expert-model-parallel-size, --expert-tensor-parallel-size, --moe-token-dispatcher-type,
// --moe-grouped-gemm, the router's score function and load balancing; or, for a dense model,
// the keys as unused.
void map_megatron_experts(const strat::Scenario& s, ExportContext& c, ArgList& a);

}  // namespace parasim::exporter
