#include "planner/export/torchtitan_experts.hpp"

#include <fmt/format.h>

#include "planner/export/export_common.hpp"
#include "strategies/input/model_presets.hpp"

namespace parasim::exporter {
namespace {

struct Flavour {
  const char* preset;
  const char* module;
  const char* config;  // torchtitan 0.3.0's config_registry function; "" when it has none
  const char* flavor;  // torchtitan 0.2.2's model flavour
};

constexpr Flavour kFlavours[] = {
    {"deepseek-v3", "deepseek_v3", "deepseek_v3_671b", "671B"},
    {"qwen3-30b-a3b", "qwen3", "qwen3_30b_a3b", "30B-A3B"},
    {"qwen3-235b-a22b", "qwen3", "", "235B-A22B"},
};

constexpr const char* kExpertPaths[] = {"/parallel/ep", "/parallel/etp", "/parallel/moe_dispatcher",
                                        "/parallel/moe_shared_expert_overlap"};

// The flavour whose shape the scenario's model is: its preset with the scenario's training
// choices (sequence length, router balancing and skew, capacity, MTP depth) copied in, equal.
const Flavour* flavour_of(const strat::ModelSpec& m) {
  for (const Flavour& f : kFlavours) {
    const strat::ModelPreset* p = strat::find_model_preset(f.preset);
    if (p == nullptr || m.name != f.preset) continue;
    strat::ModelSpec expect = p->spec;
    expect.seq_len = m.seq_len;
    expect.mtp_layers = m.mtp_layers;
    expect.moe.balancing = m.moe.balancing;
    expect.moe.max_violation = m.moe.max_violation;
    expect.moe.capacity_factor = m.moe.capacity_factor;
    if (expect == m) return &f;
  }
  return nullptr;
}

void map_router(const strat::Scenario& s, const Flavour& f, ExportContext& c) {
  const auto& moe = s.model.moe;
  const std::string shape = fmt::format("the {} flavour's experts ({} of {}, top-{})", f.flavor,
                                        moe.experts, moe.expert_ffn_hidden, moe.top_k);
  if (moe.balancing != strat::LoadBalancing::kExpertBias) {
    c.cannot("/model/moe",
             fmt::format("{} balancing (torchtitan's router balances with a per-expert bias, "
                         "load_balance_coeff, and has no auxiliary loss)",
                         strat::load_balancing_name(moe.balancing)),
             "megatron", "the expert bias");
  } else if (moe.capacity_factor > 0) {
    c.cannot("/model/moe", "a capacity factor (torchtitan's experts drop no token)", "megatron",
             "dropless");
  } else {
    c.mapped("/model/moe", shape + ", bias balancing (load_balance_coeff), dropless");
  }
  c.not_trainer("/model/moe/max_violation", "cost model: the router's skew (docs/moe.md)");
  for (const char* path : {"/model/head_dim", "/model/qk_norm", "/model/mla"}) {
    c.mapped(path, fmt::format("the {} flavour's attention", f.flavor));
  }
}

// torchtitan's parallel_dims.py: EP borrows dp_shard x cp x tp ranks; 0.3.0 shards experts on
// ep only (etp 1), or over tp without ep; 0.2.2 takes etp tp or 1.
void map_expert_layout(const strat::Scenario& s, const std::string& module, ExportContext& c,
                       Settings& out, const std::string& version) {
  const auto& p = s.parallel;
  const int etp = p.expert_tp();
  const bool v02 = version == "0.2.2";
  out.set("parallelism", "expert_parallel_degree", p.ep);
  // The export's data-parallel mapping (torchtitan_export.cpp): FSDP2 shards over dp when a
  // ZeRO stage shards anything, DDP replicates otherwise.
  const int shard = p.zero_stage > 0 && s.replicas() > 1 ? p.dp : 1;
  const int tt_etp = p.ep > 1 ? (v02 ? etp : 1) : p.tp;
  const bool etp_ok = p.ep > 1 ? (v02 ? (etp == p.tp || etp == 1) : etp == 1) : etp == p.tp;
  if (!etp_ok) {
    c.cannot("/parallel/etp",
             fmt::format("etp {} with ep {} (torchtitan {} splits experts {})", etp, p.ep, version,
                         v02 ? "over tp or not at all" : "over ep only, or over tp without ep"),
             "megatron", p.ep > 1 ? "etp 1" : "etp = tp");
  } else {
    c.mapped("/parallel/etp", v02 && p.ep > 1 ? "expert_tensor_parallel_degree"
                                              : "the experts' split (no key: implied by ep and tp)");
    if (v02 && p.ep > 1) out.set("parallelism", "expert_tensor_parallel_degree", etp);
  }
  const long long lent = static_cast<long long>(shard) * p.cp * p.tp;
  if (lent % (static_cast<long long>(tt_etp) * p.ep) != 0) {
    c.cannot("/parallel/ep",
             fmt::format("ep {} over more ranks than FSDP and TP lend it (torchtitan: efsdp = "
                         "dp_shard x cp x tp / (etp x ep) = {} / {})",
                         p.ep, lent, tt_etp * p.ep),
             "megatron", "FSDP2 over the data-parallel ranks (ZeRO-3)");
  } else {
    c.mapped("/parallel/ep", "parallelism.expert_parallel_degree");
  }
  switch (p.moe_dispatcher) {
    case strat::MoeDispatcher::kAllToAll:
      if (v02) out.set("parallelism", "expert_parallel_comm_backend", "standard");
      c.mapped("/parallel/moe_dispatcher",
               v02 ? "expert_parallel_comm_backend standard"
                   : "the config function's moe_comm_backend standard (all-to-all)");
      break;
    case strat::MoeDispatcher::kFlex:
      // 0.2.2's deepseek_v3 parallelize.py raises for DeepEP without ep or with expert tensor
      // parallelism; its other models are not known to honour the backend.
      if (v02 && p.ep > 1 && tt_etp == 1 && module == std::string("deepseek_v3")) {
        out.set("parallelism", "expert_parallel_comm_backend", "deepep");
        c.mapped("/parallel/moe_dispatcher", "expert_parallel_comm_backend deepep");
        c.note("expert_parallel_comm_backend deepep needs DeepEP installed "
               "(github.com/deepseek-ai/DeepEP)");
      } else {
        c.cannot("/parallel/moe_dispatcher",
                 v02 ? "DeepEP other than deepseek_v3 with ep > 1 and etp 1 (torchtitan 0.2.2's "
                       "parallelize.py)"
                     : "DeepEP (torchtitan 0.3.0 chooses it in the model registry, "
                       "moe_comm_backend, not by a flag)",
                 v02 ? "megatron" : "torchtitan 0.2 (expert_parallel_comm_backend deepep), megatron",
                 "all-to-all");
      }
      break;
    case strat::MoeDispatcher::kAllGather:
      c.cannot("/parallel/moe_dispatcher", "the all-gather dispatcher", "megatron", "all-to-all");
      break;
  }
  if (p.moe_shared_expert_overlap) {
    c.cannot("/parallel/moe_shared_expert_overlap",
             "shared experts under the dispatch (torchtitan has no such overlap)", "megatron",
             "the shared experts before the routing");
  } else {
    c.unused("/parallel/moe_shared_expert_overlap", "not asked for");
  }
}

}  // namespace

TorchtitanModel map_torchtitan_experts(const strat::Scenario& s, ExportContext& c, Settings& out,
                                       const std::string& version) {
  TorchtitanModel model;
  model.flavor = s.model.name;
  const Flavour* f = s.model.moe.enabled() ? flavour_of(s.model) : nullptr;
  if (f == nullptr || (version == "0.3.0" && *f->config == '\0')) {
    const std::string supported =
        f != nullptr ? fmt::format("torchtitan 0.2 (model.name {}, model.flavor {}); Megatron-LM "
                                   "(--to megatron)",
                                   f->module, f->flavor)
                     : "torchtitan's MoE models as they are (the deepseek-v3, qwen3-30b-a3b and "
                       "qwen3-235b-a22b presets, unchanged); Megatron-LM (--to megatron)";
    cover_experts_elsewhere(s, c, supported);
    return model;
  }
  model.module = f->module;
  model.config = f->config;
  model.flavor = f->flavor;
  map_router(s, *f, c);
  map_expert_layout(s, model.module, c, out, version);
  if (s.model.mtp_layers > 0) {
    // torchtitan 0.3.0's 671B config builds no MTP module (num_mtp_layers 0; only its debug
    // model has one) and 0.2.2 has none.
    c.cannot("/model/mtp_layers",
             fmt::format("{} multi-token prediction module(s) (torchtitan's {} flavour has none)",
                         s.model.mtp_layers, f->flavor),
             "megatron (--mtp-num-layers)", "no MTP module");
  } else {
    c.unused("/model/mtp_layers", "no multi-token prediction");
  }
  return model;
}

}  // namespace parasim::exporter
