#include "planner/export/megatron_experts.hpp"

#include <fmt/format.h>

#include <string>

#include "costmodel/token_exchange.hpp"

namespace parasim::exporter {
namespace {

std::string num(long long v) {
  return std::to_string(v);
}

// Megatron's --moe-layer-freq as a Python list expression of 0 (dense) and 1 (MoE) per layer,
// run-length written ("([0]*3+[1]*58)"), when not every layer is MoE (megatron-core 0.19.2
// gpt_layer_specs.py: a list must have num_layers entries).
std::string layer_pattern(const strat::ModelSpec& m) {
  std::string out;
  int run = 0;
  bool kind = m.moe.is_moe_layer(0);
  auto flush = [&](bool k, int n) {
    out += fmt::format("{}[{}]*{}", out.empty() ? "" : "+", k ? 1 : 0, n);
  };
  for (int l = 0; l < m.layers; ++l) {
    const bool moe = m.moe.is_moe_layer(l);
    if (moe != kind) {
      flush(kind, run);
      kind = moe;
      run = 0;
    }
    ++run;
  }
  flush(kind, run);
  return "(" + out + ")";
}

}  // namespace

void map_megatron_attention_extras(const strat::Scenario& s, ExportContext& c, ArgList& a) {
  const auto& m = s.model;
  if (m.explicit_head_dim > 0 && m.explicit_head_dim * m.heads != m.hidden) {
    a.add("--kv-channels", num(m.head_dim()));
    c.mapped("/model/head_dim", "--kv-channels");
  } else {
    c.unused("/model/head_dim", "hidden / heads (Megatron-LM's default --kv-channels)");
  }
  switch (m.qk_norm) {
    case strat::QkNorm::kNone:
      c.unused("/model/qk_norm", "no query/key norm");
      break;
    case strat::QkNorm::kPerHead:
      a.add("--qk-layernorm");
      c.mapped("/model/qk_norm", "--qk-layernorm (per head, kv-channels wide)");
      break;
    case strat::QkNorm::kFull:
      c.cannot("/model/qk_norm", "query/key norms over all heads (OLMoE)",
               "no Megatron-LM flag (its --qk-layernorm normalises each head)",
               "--qk-layernorm (per head)");
      a.add("--qk-layernorm");
      break;
  }
  if (m.mla.enabled()) {
    // megatron-core 0.19.2 arguments.py: --multi-latent-attention switches to MLATransformerConfig;
    // --qk-head-dim is the no-position part of a head.
    a.add("--multi-latent-attention");
    if (m.mla.q_lora_rank > 0) a.add("--q-lora-rank", num(m.mla.q_lora_rank));
    a.add("--kv-lora-rank", num(m.mla.kv_lora_rank));
    a.add("--qk-head-dim", num(m.mla.qk_nope_head_dim));
    a.add("--qk-pos-emb-head-dim", num(m.mla.qk_rope_head_dim));
    a.add("--v-head-dim", num(m.mla.v_head_dim));
    c.mapped("/model/mla",
             "--multi-latent-attention --q-lora-rank --kv-lora-rank --qk-head-dim "
             "--qk-pos-emb-head-dim --v-head-dim");
  } else {
    c.unused("/model/mla", "grouped-query attention");
  }
  if (m.mtp_layers > 0) {
    // megatron-core 0.19.2 --mtp-num-layers: the modules on the last stage with the output layer
    // (the default placement, as parasim simulates it); the loss weight keeps Megatron's default.
    a.add("--mtp-num-layers", num(m.mtp_layers));
    c.mapped("/model/mtp_layers", "--mtp-num-layers");
    c.note("--mtp-loss-scaling-factor keeps Megatron-LM's default 0.1 (DeepSeek-V3 used 0.3, then "
           "0.1); the scenario has no loss weight");
  } else {
    c.unused("/model/mtp_layers", "no multi-token prediction");
  }
}

void map_megatron_experts(const strat::Scenario& s, ExportContext& c, ArgList& a) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  if (!m.moe.enabled()) {
    c.unused("/model/moe", "dense model");
    for (const char* path : {"/parallel/ep", "/parallel/etp", "/parallel/moe_dispatcher",
                             "/parallel/moe_shared_expert_overlap"}) {
      c.unused(path, "dense model: no experts to lay out");
    }
    return;
  }
  const auto& moe = m.moe;
  a.add("--num-experts", num(moe.experts));
  a.add("--moe-router-topk", num(moe.top_k));
  a.add("--moe-ffn-hidden-size", num(moe.expert_ffn_hidden));
  if (moe.shared_experts > 0) {
    a.add("--moe-shared-expert-intermediate-size",
          num(static_cast<long long>(moe.shared_experts) * moe.shared_ffn_hidden));
  }
  if (moe.moe_layers_in(0, m.layers) != m.layers) a.add("--moe-layer-freq", layer_pattern(m));
  a.add("--moe-router-score-function",
        moe.score == strat::RouterScore::kSigmoid ? "sigmoid" : "softmax");
  switch (moe.balancing) {
    case strat::LoadBalancing::kAuxLoss:
      a.add("--moe-router-load-balancing-type", "aux_loss");
      break;
    case strat::LoadBalancing::kSeqAuxLoss:
      a.add("--moe-router-load-balancing-type", "seq_aux_loss");
      break;
    case strat::LoadBalancing::kExpertBias:
      a.add("--moe-router-load-balancing-type", "none");
      a.add("--moe-router-enable-expert-bias");
      break;
    case strat::LoadBalancing::kNone:
      a.add("--moe-router-load-balancing-type", "none");
      break;
  }
  a.add("--moe-grouped-gemm");
  if (moe.capacity_factor > 0) {
    a.add("--moe-expert-capacity-factor", fmt::format("{}", moe.capacity_factor));
    a.add("--moe-token-drop-policy", "probs");  // Megatron's default, stated
  }
  c.mapped("/model/moe",
           "--num-experts --moe-router-topk --moe-ffn-hidden-size "
           "--moe-shared-expert-intermediate-size --moe-layer-freq --moe-router-score-function "
           "--moe-router-load-balancing-type --moe-router-enable-expert-bias --moe-grouped-gemm "
           "--moe-expert-capacity-factor (none: dropless)");
  c.not_trainer("/model/moe/max_violation", "cost model: the router's skew (docs/moe.md)");
  if (moe.balancing == strat::LoadBalancing::kAuxLoss ||
      moe.balancing == strat::LoadBalancing::kSeqAuxLoss) {
    c.note(
        "set --moe-aux-loss-coeff (Megatron-LM's default 0.0 leaves the auxiliary loss's "
        "weight at zero; the scenario has no coefficient)");
  }
  a.add("--expert-model-parallel-size", num(p.ep));
  c.mapped("/parallel/ep", "--expert-model-parallel-size");
  a.add("--expert-tensor-parallel-size", num(p.expert_tp()));
  c.mapped("/parallel/etp", "--expert-tensor-parallel-size");
  a.add("--moe-token-dispatcher-type", strat::moe_dispatcher_name(p.moe_dispatcher));
  if (p.moe_dispatcher == strat::MoeDispatcher::kFlex) {
    // megatron-core 0.19.2: the flex dispatcher's backend (deepep, its default, stated) and the
    // SMs its kernels take (None -> 20 in token_dispatcher.py, what the buffers are sized for).
    // DeepEP takes fp32 probabilities only (token_dispatcher.py warns and casts otherwise).
    a.add("--moe-flex-dispatcher-backend", "deepep");
    a.add("--moe-flex-dispatcher-num-sms", num(cost::kDeepEpDefaultSms));
    a.add("--moe-router-dtype", "fp32");
    c.mapped("/parallel/moe_dispatcher",
             "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep "
             "--moe-flex-dispatcher-num-sms --moe-router-dtype fp32");
    c.note("the flex dispatcher needs DeepEP installed (github.com/deepseek-ai/DeepEP) and the "
           "network's adaptive routing off (Megatron's fused_a2a.py)");
  } else {
    c.mapped("/parallel/moe_dispatcher", "--moe-token-dispatcher-type");
  }
  if (p.moe_shared_expert_overlap) a.add("--moe-shared-expert-overlap");
  c.mapped("/parallel/moe_shared_expert_overlap", "--moe-shared-expert-overlap");
}

}  // namespace parasim::exporter
