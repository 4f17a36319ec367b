#pragma once
// parasim::plan::SearchSpace — the axes the planner searches and their values; a candidate is an
// index in their mixed-radix product, decoded on demand (nothing materialised), so threads and
// MPI ranks take deterministic index ranges.
//
// Axes, slowest-varying first: layout (gpus, dp, tp, pp, cp with dp x tp x pp x cp = gpus),
// sequence_parallel, chunks, schedule, micro_batch, recompute, zero_stage, attention,
// tp_placement, optimizer (implementation and Shampoo/DASH block size), edge stage layers,
// expert parallelism and the token dispatcher (models with experts).
//
// Defaults (docs/planner.md): every layout using all of the cluster's GPUs (search.gpus
// changes the counts); tp, pp, cp any divisor of the GPU count (tp beyond a node only with
// tp_across_nodes); sequence parallel off and on; chunks the divisors of the layers up to 8;
// the synchronous schedules of the registry (strategies/registry/) but gpipe (same bubble as
// 1f1b and more memory), the asynchronous ones only with allow_async or max_staleness;
// micro-batches dividing the global batch; recompute none/selective/full; ZeRO 0-3; both
// attention cores; the placements of the registry that apply to the model (megatron or TSP for
// dense models, vanilla and BTP for low-rank ones); the scenario's optimizer (Shampoo: also DASH
// with layer and gpu stacking).
//
// The scenario's `search` section and `--search KEY=V1,V2` flags replace an axis's values:
// a list of values, or {"min": A, "max": B} keeping the default values in [A, B]. Keys: gpus,
// dp, tp, pp, cp, sequence_parallel, chunks, schedule, micro_batch, recompute, zero_stage,
// attention, tp_placement, optimizer ("shampoo", "dash-layer", "dash-gpu"), block_size,
// first_stage_layers, last_stage_layers (Megatron-LM's edge stage counts; by default the stages
// are even, or balanced with fewer layers on the first and last when pp does not divide the
// layers), max_staleness (a number: async schedules allowed), allow_async, tp_across_nodes,
// ep (default: the divisors of the experts; 1 for a dense model), etp (default: tp and 1, the two
// Megatron layouts, MoE parallel folding arXiv 2504.14960; tp for a dense model), moe_dispatcher
// (default: alltoall and flex for a model with experts, the rules keeping those the layout
// allows; allgather when listed).
// Unknown keys, empty lists, values out of range and contradictory ranges are InputErrors
// naming the JSON path (/search/KEY; flags: --search KEY); a space over max_candidates is
// refused at /search.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "costmodel/diagnostics.hpp"
#include "planner/candidate.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::plan {

struct Layout {
  int gpus = 1, dp = 1, tp = 1, pp = 1, cp = 1;
};

struct OptimizerChoice {
  strat::OptimizerKind kind = strat::OptimizerKind::kAdamW;
  strat::Stacking stacking = strat::Stacking::kNone;
  int block_size = 1024;
};

struct SearchOptions {
  bool allow_async = false;      // --allow-async
  int gpus = 0;                  // --gpus N (0: the cluster's)
  double max_candidates = 4e8;   // --max-candidates
  std::vector<std::string> flags;  // --search KEY=V1,V2,...
  bool per_op_recompute = false;   // per-op in the default recompute axis (plan --for torchtitan)
  // A TP overlap searched beside the scenario's own by default (registry name; empty: none):
  // async-tp for plan --for torchtitan, userbuffers for --for megatron.
  std::string tp_overlap;
};

class SearchSpace {
 public:
  std::vector<Layout> layouts;
  std::vector<bool> sequence_parallel;
  std::vector<int> chunks;
  std::vector<strat::PipelineSchedule> schedules;
  std::vector<int> micro_batches;
  std::vector<cost::Recompute> recomputes;
  // Sharding entries (strategies/registry/sharding.cpp): ZeRO's stages and FSDP2.
  struct Sharding {
    int zero_stage = 0;
    bool fsdp2 = false;
  };
  std::vector<Sharding> shardings;
  std::vector<strat::AttentionKind> attentions;
  std::vector<strat::TpPlacement> placements;
  std::vector<OptimizerChoice> optimizers;
  std::vector<int> eps;                           // expert-parallel degrees ({1}: dense)
  std::vector<int> etps{0};                       // expert tensor-parallel degrees (0: tp)
  std::vector<strat::MoeDispatcher> dispatchers;  // token dispatchers ({alltoall})
  // How cp ranks exchange attention's tensors (cp_variant; the scenario's own by default) and
  // a2a+p2p's all-to-all group, the scenario's cp_a2a_size (0: none given).
  std::vector<strat::CpComm> cp_comms{strat::CpComm::kRing};
  int cp_a2a_size = 0;
  // FP8 recipes (kNone: the scenario's 16/32-bit GEMMs); the scenario's own by default.
  std::vector<cost::QuantRecipe> recipes{cost::QuantRecipe::kNone};
  // Optimizer offload flavours (docs/offload.md): the scenario's own, and none beside it.
  std::vector<cost::OffloadFlavour> offloads{cost::OffloadFlavour::kNone};
  // torch.compile off / on (torchtitan's blocks): the scenario's own, both for torchtitan's.
  std::vector<bool> compiles{false};
  // TP communication overlaps (docs/tp-overlap.md): none, the scenario's own and the trainer's.
  std::vector<strat::TpCommOverlap> tp_overlaps{strat::TpCommOverlap::kNone};
  // Megatron-LM's first/last stage layer counts (0: the even share; both 0 with pp not dividing
  // the layers: the balanced edge split, resolved into the counts when decoded).
  std::vector<std::pair<int, int>> edge_layers{{0, 0}};
  int layers = 0;  // the model's, for the balanced split
  bool tp_across_nodes = false;
  bool async_allowed = false;
  int max_staleness = -1;  // -1: not stated

  std::uint64_t size() const;
  Candidate decode(std::uint64_t index) const;
};

// The space for `base` (its model, cluster, global batch, sequence length, optimizer), narrowed
// or widened by `search` (the scenario's "search" object, or null) and the options. Throws
// cost::InputError naming `file` and every bad path.
SearchSpace make_search_space(const strat::Scenario& base, const nlohmann::json* search,
                              const SearchOptions& options, const std::string& file);

}  // namespace parasim::plan
