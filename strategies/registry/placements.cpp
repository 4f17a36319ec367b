// Tensor-parallel placements: Megatron-LM's, BOOST's vanilla and bottleneck-aware low-rank
// placements, and TSP's folded tensor and sequence parallelism.
#include <fmt/format.h>

#include "strategies/registry/kind_lists.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::strat {
namespace {

void megatron_needs_dense_model(const Scenario& s, cost::Diagnostics& d) {
  if (s.model.low_rank.enabled()) {
    d.add("/parallel/tp_placement", "a low-rank model needs \"tp_placement\": \"vanilla\" or "
                                    "\"btp\" (megatron is for dense models)");
  }
}

void tsp_requirements(const Scenario& s, cost::Diagnostics& d) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  const auto& t = s.training;
  if (m.low_rank.enabled() || p.sequence_parallel || p.cp > 1 ||
      t.attention != AttentionKind::kFlash || m.seq_len % p.tp != 0 || p.zero_stage == 3 ||
      splits_weight_gradient(p.schedule) || t.recompute == cost::Recompute::kSelective) {
    d.add("/parallel/tp_placement",
          "tsp folds sequence and tensor parallelism on tp = D ranks: it needs a dense model, "
          "\"attention\": \"flash\", seq_len divisible by tp, and no sequence_parallel, cp, "
          "zero_stage 3, zero-bubble schedule or selective recompute (FlashAttention leaves "
          "nothing for it; \"full\" is supported)");
  }
}

// With tp 1 there is nothing to fold: the layout is the plain one, and one layout has one cost.
void tsp_needs_tensor_parallelism(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.tp == 1) {
    d.add("/parallel/tp_placement",
          "tsp folds sequence and tensor parallelism on tp ranks: with tp 1 there is nothing to "
          "fold, the layout is the plain one (\"megatron\"); set tp > 1 or the megatron "
          "placement");
  }
}

void tsp_buckets_divide_kv_heads(const Scenario& s, cost::Diagnostics& d) {
  const auto& m = s.model;
  const auto& p = s.parallel;
  if (p.tsp_kv_buckets > 1 && m.kv_heads > 0 &&
      m.kv_heads % (static_cast<long long>(p.tp) * p.tsp_kv_buckets) != 0) {
    d.add("/parallel/tsp_kv_buckets",
          fmt::format("tsp_kv_buckets ({}) must divide each round's kv heads: kv_heads ({}) "
                      "must be a multiple of tp x tsp_kv_buckets ({} x {})",
                      p.tsp_kv_buckets, m.kv_heads, p.tp, p.tsp_kv_buckets));
  }
}

// Rails-only: TSP's weight ring hops from tp rank t to t + 1; between nodes that keeps the local
// index only when the hop stays inside a node.
void tsp_ring_on_rails(const Scenario& s, cost::Diagnostics& d) {
  const int gpn = s.cluster.gpus_per_node;
  if (s.cluster.rails_only && s.cluster.nodes > 1 && gpn > 0 && s.parallel.tp > gpn) {
    d.add("/cluster/rails_only",
          fmt::format("on a rails-only fabric TSP's weight ring cannot cross nodes (its hop "
                      "from the last GPU of a node to the first of the next changes the local "
                      "index): keep tp ({}) <= gpus_per_node ({})",
                      s.parallel.tp, gpn));
  }
}

void tsp_buckets_need_tsp(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.tsp_kv_buckets != 1) {
    d.add("/parallel/tsp_kv_buckets", "tsp_kv_buckets applies to \"tp_placement\": \"tsp\" only");
  }
}

void low_rank_placement_needs_low_rank_model(const Scenario& s, cost::Diagnostics& d) {
  if (!s.model.low_rank.enabled()) {
    d.add("/parallel/tp_placement", fmt::format("\"{}\" needs a low-rank model (add "
                                                "/model/low_rank)",
                                                tp_placement_name(s.parallel.tp_placement)));
  }
}

void vanilla_ranks_split_over_tp(const Scenario& s, cost::Diagnostics& d) {
  const auto& lr = s.model.low_rank;
  const int tp = s.parallel.tp;
  if (lr.enabled() && (lr.attn_rank % tp != 0 || lr.mlp_rank % tp != 0)) {
    d.add("/model/low_rank", fmt::format("vanilla low-rank TP splits the ranks ({}, {}) over tp "
                                         "({}); they must be multiples of it",
                                         lr.attn_rank, lr.mlp_rank, tp));
  }
}

void checkpointing_needs_btp(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.lowrank_checkpointing) {
    d.add("/parallel/lowrank_checkpointing", "low-rank checkpointing applies to \"btp\"");
  }
}

ParameterSpec flag(const std::string& path, const std::string& default_value,
                   const std::string& meaning, Rule when_not_taken = nullptr) {
  ParameterSpec p;
  p.path = path;
  p.default_value = default_value;
  p.range_text = "true or false";
  p.meaning = meaning;
  p.when_not_taken = when_not_taken;
  return p;
}

ParameterSpec low_rank_model() {
  ParameterSpec p;
  p.path = "/model/low_rank";
  p.default_value = "dense";
  p.range_text = "rank, attn_rank and mlp_rank, or rank_ratio; variant svd, cola or lax";
  p.meaning = "the model's low-rank factorisation";
  return p;
}

const char* kBoost = "Wang et al. 2025, BOOST (MLSys 2026), arXiv 2512.12131";

}  // namespace

std::vector<Entry> placement_entries() {
  Entry megatron;
  megatron.kind = EntryKind::kTpPlacement;
  megatron.name = megatron.value = "megatron";
  megatron.description = "Megatron tensor parallelism: column- then row-parallel GEMMs, two "
                         "all-reduces forward and two backward per layer (with "
                         "sequence_parallel: all-gather and reduce-scatter instead)";
  megatron.paper = "Shoeybi et al. 2019, Megatron-LM, arXiv 1909.08053; Korthikanti et al. "
                   "2022, arXiv 2205.05198 (sequence parallelism)";
  megatron.rules = {megatron_needs_dense_model};
  megatron.builder = "layer_program.cpp: transformer_layer_program";
  megatron.traits = PlacementTraits{.id = TpPlacement::kMegatron};

  Entry tsp;
  tsp.kind = EntryKind::kTpPlacement;
  tsp.name = tsp.value = "tsp";
  tsp.description = "TSP: tensor and sequence parallelism folded on tp = D ranks; attention in D "
                    "rounds (weight shard broadcast, K/V all-gather per head shard, no "
                    "all-reduce), MLP as a weight ring; 4 B S h k + 32 h^2 k bytes per rank per "
                    "layer forward, fewer than TP when B S > 8h";
  tsp.paper = "Zyphra 2026, TSP, arXiv 2604.26294";
  ParameterSpec buckets;
  buckets.path = "/parallel/tsp_kv_buckets";
  buckets.default_value = "1";
  buckets.min = 1;
  buckets.max = 1 << 12;
  buckets.meaning = "K/V of a round's head shard gathered in this many buckets";
  buckets.when_not_taken = tsp_buckets_need_tsp;
  tsp.parameters = {buckets};
  tsp.rules = {tsp_needs_tensor_parallelism, tsp_requirements, tsp_buckets_divide_kv_heads,
               tsp_ring_on_rails};
  tsp.builder =
      "tsp_layer.cpp: tsp_layer_program; tsp_vocab.cpp: tsp_embedding_program, tsp_head_program";
  tsp.traits = PlacementTraits{.id = TpPlacement::kTsp, .folds_sequence = true};

  Entry vanilla;
  vanilla.kind = EntryKind::kTpPlacement;
  vanilla.name = vanilla.value = "vanilla";
  vanilla.description = "BOOST's vanilla low-rank TP: each low-rank pair split on its rank r "
                        "(down column-, up row-parallel), an all-reduce of [T, d_out] after every "
                        "pair: 5h + 2f elements per token per layer forward; needs a model with "
                        "\"low_rank\"";
  vanilla.paper = kBoost;
  vanilla.parameters = {low_rank_model()};
  vanilla.rules = {low_rank_placement_needs_low_rank_model, vanilla_ranks_split_over_tp};
  vanilla.builder = "low_rank_layer.cpp: low_rank_layer_program";
  vanilla.traits = PlacementTraits{.id = TpPlacement::kVanilla, .low_rank = true};

  Entry btp;
  btp.kind = EntryKind::kTpPlacement;
  btp.name = btp.value = "btp";
  btp.description = "BOOST's bottleneck-aware TP: the residual stream sharded over tp, chunks "
                    "shifted so that every all-reduce carries r-wide activations (3r QKV, r O, "
                    "2r gate+up, r down: 7r elements per token per layer forward); needs a model "
                    "with \"low_rank\"";
  btp.paper = kBoost;
  btp.parameters = {
      low_rank_model(),
      flag("/parallel/online_rmsnorm", "true",
           "the RMSNorm statistic rides in the next all-reduce"),
      flag("/parallel/linear_grouping", "true",
           "linears sharing an input are one GEMM and one collective"),
      flag("/parallel/lowrank_checkpointing", "false",
           "keep the r-wide chunk boundaries, recompute the layer's compute in the backward",
           checkpointing_needs_btp)};
  btp.rules = {low_rank_placement_needs_low_rank_model};
  btp.builder = "low_rank_layer.cpp: low_rank_layer_program";
  btp.traits = PlacementTraits{.id = TpPlacement::kBtp, .low_rank = true};

  // Dense placements first, then the low-rank ones (the planner's axis order).
  return {megatron, tsp, vanilla, btp};
}

}  // namespace parasim::strat
