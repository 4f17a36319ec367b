#pragma once
// parasim::exporter torchtitan's mixtures of experts: its MoE models are model code with fixed
// shapes (torchtitan 0.3.0: a module and a config_registry function, e.g. `--module deepseek_v3
// --config deepseek_v3_671b`; 0.2.2: model.name and model.flavor), so a scenario maps when its
// model is the preset of one of them (docs/moe.md, docs/export.md):
//   deepseek-v3      deepseek_v3 / deepseek_v3_671b / "671B"
//   qwen3-30b-a3b    qwen3 / qwen3_30b_a3b / "30B-A3B"
//   qwen3-235b-a22b  qwen3 / (no 0.3.0 config function) / "235B-A22B"
// (torchtitan 0.3.0 models/deepseek_v3/config_registry.py, models/qwen3/config_registry.py;
// 0.2.2 models/*/__init__.py). Their routers balance with a per-expert bias (load_balance_coeff,
// no auxiliary loss) and drop no token. Expert parallelism: parallelism.expert_parallel_degree;
// EP borrows its ranks from FSDP and TP (distributed/parallel_dims.py: efsdp = dp_shard x cp x
// tp / (etp x ep)); 0.3.0 shards the experts over ep only (etp 1 with ep > 1, as tp with ep 1),
// 0.2.2 takes expert_tensor_parallel_degree (tp or 1) and expert_parallel_comm_backend
// (standard all-to-all, or deepep). Internal to the torchtitan export.

#include <string>

#include "planner/export/export_context.hpp"
#include "planner/export/torchtitan_settings.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::exporter {

// The model torchtitan builds: module and config function (0.3.0) or name and flavor (0.2.2).
// For a dense model module "llama3" and an empty config (the user names the function) and
// flavor the scenario's model name, as before.
struct TorchtitanModel {
  std::string module = "llama3";
  std::string config;
  std::string flavor;
};

// Covers /model/moe, the attention variants of the MoE presets (head_dim, qk_norm, mla),
// /parallel/ep, /parallel/etp, /parallel/moe_dispatcher and /parallel/moe_shared_expert_overlap,
// sets the expert-parallel settings, and says which model torchtitan builds. `version` "0.3.0" or
// "0.2.2".
TorchtitanModel map_torchtitan_experts(const strat::Scenario& s, ExportContext& c, Settings& out,
                                       const std::string& version);

}  // namespace parasim::exporter
