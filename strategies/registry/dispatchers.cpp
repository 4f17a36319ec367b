// MoE token dispatchers (Megatron-core's --moe-token-dispatcher-type), chosen by
// parallel.moe_dispatcher when the model has experts; their layout rules (MoE parallel folding,
// arXiv 2504.14960) and what the builder models with experts.
#include <fmt/format.h>

#include "costmodel/token_exchange.hpp"
#include "strategies/registry/kind_lists.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {
namespace {

// megatron-core 0.19.2: num_experts % expert_model_parallel_size (arguments.py); the expert
// grid etp x ep x edp must tile the stage's tp x cp x dp GPUs (parallel_state.py: world %
// (etp ep pp) == 0 with the same pipeline groups).
void experts_fold_over_the_stage(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  const int experts = s.model.moe.experts;
  if (experts % p.ep != 0) {
    d.add("/parallel/ep", fmt::format("ep ({}) must divide the experts ({})", p.ep, experts));
  }
  const long long stage_gpus = static_cast<long long>(p.tp) * p.cp * p.dp;
  const long long grid = static_cast<long long>(p.expert_tp()) * p.ep;
  if (stage_gpus % grid != 0) {
    d.add("/parallel/ep",
          fmt::format("etp x ep = {} x {} = {} must divide a stage's tp x cp x dp = {} GPUs "
                      "(the expert grid folds over the attention grid)",
                      p.expert_tp(), p.ep, grid, stage_gpus));
  }
  if (s.model.moe.expert_ffn_hidden % p.expert_tp() != 0) {
    d.add("/parallel/etp", fmt::format("etp ({}) must divide expert_ffn_hidden ({})", p.expert_tp(),
                                       s.model.moe.expert_ffn_hidden));
  }
}

// megatron-core 0.19.2 moe_layer.py: MoELayer.forward raises in training when the attention's
// tensor-parallel group is larger than one without sequence parallelism.
void tensor_parallel_needs_sequence_parallel(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.tp > 1 && !s.parallel.sequence_parallel) {
    d.add("/parallel/sequence_parallel",
          "an MoE model with tp > 1 runs with sequence parallelism (Megatron-core refuses it "
          "without): set \"sequence_parallel\": true");
  }
}

// megatron-core 0.19.2 transformer_config.py: the overlap needs the alltoall or flex dispatcher;
// without shared experts there is nothing to overlap.
void shared_overlap_applies(const Scenario& s, cost::Diagnostics& d) {
  if (!s.parallel.moe_shared_expert_overlap) return;
  if (s.parallel.moe_dispatcher == MoeDispatcher::kAllGather) {
    d.add("/parallel/moe_shared_expert_overlap",
          "the shared experts overlap the alltoall or flex dispatcher's dispatch only");
  }
  if (s.model.moe.shared_experts == 0) {
    d.add("/parallel/moe_shared_expert_overlap", "the model has no shared experts to overlap");
  }
}

// DeepEP (deep_ep/buffer.py @ 567632d): a recommended config exists for these group sizes only
// (Megatron's get_buffer asserts otherwise); Megatron-core asserts TP x EP > 1 (token_
// dispatcher.py). Internode kernels assume 8 NVLink peers a node (NUM_MAX_NVL_PEERS); the
// intranode ones need the whole group on NVLink.
void deepep_group_fits(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.moe_dispatcher != MoeDispatcher::kFlex) return;
  const auto problem = cost::deepep_group_problem(s.parallel.expert_tp() * s.parallel.ep,
                                                  s.cluster.gpus_per_node);
  if (problem) d.add("/parallel/moe_dispatcher", *problem);
}

// What the builder models beside experts; each refusal names what to change.
void modelled_with_experts(const Scenario& s, cost::Diagnostics& d) {
  const auto& p = s.parallel;
  if (p.zero_stage == 3) {
    d.add("/parallel/zero_stage",
          "experts are modelled with ZeRO stages 0 to 2 (Megatron's "
          "distributed optimizer), not 3");
  }
  if (p.cp > 1) d.add("/parallel/cp", "experts are not modelled with context parallelism yet");
  if (is_searched(p.schedule)) {
    d.add("/parallel/schedule",
          "the searched zero-bubble schedules (zb-1p, zb-2p) are not "
          "modelled with experts yet");
  }
  if (p.tp_placement != TpPlacement::kMegatron) {
    d.add("/parallel/tp_placement", "experts are modelled with the megatron placement");
  }
  if (s.optimizer.kind != OptimizerKind::kAdamW) {
    d.add("/optimizer/name", "experts are modelled with AdamW");
  }
}

constexpr const char* kMegatronMoe =
    "Megatron-core MoE (token_dispatcher.py); Liu et al. 2025, MoE Parallel Folding, "
    "arXiv 2504.14960";

Entry dispatcher(const std::string& name, MoeDispatcher id, const std::string& description,
                 const std::string& paper = kMegatronMoe) {
  Entry e;
  e.kind = EntryKind::kDispatcher;
  e.name = e.value = name;
  e.description = description;
  e.paper = paper;
  e.rules = {experts_fold_over_the_stage, tensor_parallel_needs_sequence_parallel,
             modelled_with_experts, shared_overlap_applies, deepep_group_fits};
  e.builder = "moe_layer.cpp: moe_block_forward / moe_block_backward";
  e.traits = DispatcherTraits{id};
  return e;
}

}  // namespace

std::vector<Entry> dispatcher_entries() {
  return {dispatcher("alltoall", MoeDispatcher::kAllToAll,
                     "each token's k copies permuted and sent to their experts' ranks by an "
                     "all-to-all over ep (T k h bytes per rank each way), all-gathered over etp"),
          dispatcher("allgather", MoeDispatcher::kAllGather,
                     "every token, its routing map and probabilities all-gathered over etp x ep; "
                     "each rank keeps its experts' tokens; a reduce-scatter brings them back"),
          dispatcher("flex", MoeDispatcher::kFlex,
                     "DeepEP's fused kernels over etp x ep: each token once to each rank holding "
                     "its experts, once over the NIC to each other node (then NVLink); pinned "
                     "NVLink and RDMA buffers; needs DeepEP installed",
                     std::string(kMegatronMoe) +
                         "; DeepEP (github.com/deepseek-ai/DeepEP); DeepSeek-V3, arXiv 2412.19437 "
                         "sec. 3.2.2")};
}

}  // namespace parasim::strat
