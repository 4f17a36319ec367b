#pragma once
// parasim::plan::Candidate — one way to train the scenario's model on its cluster: every field
// the planner searches (docs/planner.md, Search space). A candidate is decoded from its index in
// the search space (search_space.hpp) and applied to the base scenario to get the Scenario that
// `simulate` would run.

#include <string>
#include <vector>

#include "strategies/input/scenario.hpp"

namespace parasim::plan {

struct Candidate {
  int gpus = 1;  // dp x tp x pp x cp; the cluster's nodes become gpus / gpus_per_node
  int dp = 1, tp = 1, pp = 1, cp = 1;
  bool sequence_parallel = false;
  int chunks = 1;
  strat::PipelineSchedule schedule = strat::PipelineSchedule::kOneFOneB;
  int micro_batch = 1;
  cost::Recompute recompute = cost::Recompute::kNone;
  int zero_stage = 0;
  bool fsdp2 = false;  // sharding "fsdp2" (zero_stage 3), with the base scenario's parallel.fsdp
  strat::AttentionKind attention = strat::AttentionKind::kUnfused;
  strat::TpPlacement placement = strat::TpPlacement::kMegatron;
  strat::OptimizerKind optimizer = strat::OptimizerKind::kAdamW;
  strat::Stacking stacking = strat::Stacking::kNone;
  int block_size = 1024;  // Shampoo/DASH max_preconditioner_dim
  // Models with experts: the expert-parallel degree, the expert tensor-parallel degree (0: tp,
  // Megatron's default) and the token dispatcher.
  int ep = 1;
  int etp = 0;
  strat::MoeDispatcher dispatcher = strat::MoeDispatcher::kAllToAll;
  // How the cp ranks exchange attention's tensors (cp > 1; docs/context-parallel.md) and
  // a2a+p2p's all-to-all group.
  strat::CpComm cp_comm = strat::CpComm::kRing;
  int cp_a2a_size = 0;
  // The FP8 recipe of the linears (kNone: the scenario's 16/32-bit precision throughout).
  cost::QuantRecipe recipe = cost::QuantRecipe::kNone;
  // Optimizer offload (docs/offload.md); the base scenario's fraction, overlap and pinning ride
  // along when it is the base's own flavour, the defaults otherwise.
  cost::OffloadFlavour offload = cost::OffloadFlavour::kNone;
  // torch.compile of torchtitan's blocks (training.framework.compile; docs/pytorch-native.md).
  bool compile = false;
  // The TP collectives overlapped with their GEMMs (docs/tp-overlap.md).
  strat::TpCommOverlap tp_overlap = strat::TpCommOverlap::kNone;
  // Megatron-LM's first and last stage layer counts (0: that edge takes the even share); with
  // both 0 and pp not dividing the layers, the balanced edge split (strategies/input/
  // stage_split.hpp). One model chunk per stage whenever the stages are uneven.
  int first_stage_layers = 0, last_stage_layers = 0;
  // The "yours" row of a scenario whose parallel.stage_layers are no edge split ([9, 7, 8, 8]):
  // its stages are the base scenario's as written, which first/last cannot express.
  bool own_stage_layers = false;

  bool operator==(const Candidate&) const = default;
};

// The candidate's expert tensor-parallel degree: etp, or tp when 0.
inline int expert_tp(const Candidate& c) { return c.etp > 0 ? c.etp : c.tp; }

// A hash of the fields that usually tell candidates apart (equality compares them all).
struct CandidateHash {
  std::size_t operator()(const Candidate& c) const;
};

// The candidate's layers per pipeline stage when they are uneven (first/last counts, or the
// balanced split when pp does not divide the layers; chunks 1 only), empty when even; `valid`
// false when no split exists (the rules reject it: kLayers).
std::vector<int> uneven_stage_layers(int layers, const Candidate& c, bool* valid);

// The base cluster cut to `gpus` of its GPUs: whole nodes (nodes = gpus / gpus_per_node) or, for
// fewer GPUs than a node holds, one node of `gpus` GPUs (`plan --gpus 4` on 8-GPU nodes).
cost::ClusterSpec cluster_for_gpus(const cost::ClusterSpec& base, int gpus);

// GPUs per node of cluster_for_gpus(base.cluster, c.gpus), without copying the cluster.
int node_size(const strat::Scenario& base, const Candidate& c);

// The base scenario with the candidate's fields (its cluster cluster_for_gpus(c.gpus)); the
// stages even, or the candidate's edge split (uneven_stage_layers), or the base's own with
// own_stage_layers; optimizer post-validation as set only for the zero-bubble schedules (else the
// schedule's default).
strat::Scenario apply_candidate(const strat::Scenario& base, const Candidate& c);
// Whether the candidate runs with optimizer post-validation (apply_candidate's rule, without
// building the scenario): strat::post_validation of apply_candidate(base, c).parallel.
bool candidate_post_validation(const strat::Scenario& base, const Candidate& c);
// The candidate a scenario already is (its own layout, "your layout").
Candidate candidate_of(const strat::Scenario& s);
// "dp 2 tp 8 pp 4 cp 1 1f1b mb 1 rc none ZeRO 1 SP" — the closest rejects and progress lines.
std::string describe(const Candidate& c);

}  // namespace parasim::plan
