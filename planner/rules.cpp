#include "planner/rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "costmodel/token_exchange.hpp"
#include "strategies/layers/checkpoint_groups.hpp"
#include "strategies/registry/registry.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"
#include "strategies/schedules/schedule_family.hpp"

namespace parasim::plan {
namespace {

using strat::PipelineSchedule;
using strat::TpPlacement;

// scenario_parser.cpp's uneven data-parallel group rule, same loop, cached per shape (it walks
// pp x tp x replicas ranks).
bool uneven_groups(int tp, int replicas, int pp, int gpn) {
  thread_local std::unordered_map<std::uint64_t, bool> cache;
  const std::uint64_t key =
      (static_cast<std::uint64_t>(tp) << 48) ^ (static_cast<std::uint64_t>(replicas) << 28) ^
      (static_cast<std::uint64_t>(pp) << 14) ^ static_cast<std::uint64_t>(gpn);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  bool uneven = false;
  for (long long stage = 0; stage < pp && !uneven; ++stage) {
    for (long long r = 0; r < tp && r < 64 && !uneven; ++r) {
      std::map<long long, int> per_node;
      for (long long dr = 0; dr < replicas; ++dr) {
        ++per_node[(r + tp * (dr + replicas * stage)) / gpn];
      }
      const int first = per_node.begin()->second;
      for (const auto& entry : per_node) uneven = uneven || entry.second != first;
    }
  }
  cache.emplace(key, uneven);
  return uneven;
}

}  // namespace

const char* reason_text(Reason r) {
  switch (r) {
    case Reason::kOk:
      return "valid";
    case Reason::kHeads:
      return "tp does not divide the heads or kv heads";
    case Reason::kLayers:
      return "no split of the layers: pp x chunks does not divide them, and no edge split";
    case Reason::kChunks:
      return "chunks the schedule does not run (interleaved-1f1b any, interleaved-zb 2 or more, "
             "zb-v and dualpipev 2, the others 1)";
    case Reason::kInterleavedBatch:
      return "micro-batches the schedule cannot run (interleaved-1f1b: groups of pp or "
             "microbatch_group; interleaved-zb: rounds; dualpipev: fewer than 2 pp)";
    case Reason::kAsync:
      return "asynchronous schedule with ZeRO-2/3, FSDP2, optimizer offload or not adamw";
    case Reason::kZero3:
      return "ZeRO-3 with a schedule other than gpipe or 1f1b";
    case Reason::kFsdp2:
      return "FSDP2: not gpipe, 1f1b or interleaved-1f1b, experts, a low-rank placement, or "
             "parallel.fsdp's replicas or reshard group not dividing";
    case Reason::kPlacement:
      return "TP placement does not apply (TSP or low-rank rules)";
    case Reason::kBatch:
      return "global batch not a multiple of micro-batch x dp";
    case Reason::kContextParallel:
      return "cp rules (flash, sequence split, no interleaving)";
    case Reason::kTpNodes:
      return "tp and the node size (divide it, or a multiple of it)";
    case Reason::kUnevenGroups:
      return "data-parallel groups uneven on nodes";
    case Reason::kRails:
      return "rails-only fabric: hop off its rail";
    case Reason::kHidden:
      return "tp does not divide hidden or ffn_hidden";
    case Reason::kSequenceParallel:
      return "sequence parallel with tp 1";
    case Reason::kExperts:
      return "experts: ep must divide them, etp x ep fold over a stage, SP with tp > 1";
    case Reason::kPrecision:
      return "no peak FLOP rate for the precision, or the device cannot run the FP8 recipe";
    case Reason::kStaleness:
      return "staleness over search.max_staleness";
    case Reason::kDuplicate:
      return "same run as another candidate (pp 1 schedules; flash + selective; etp = tp)";
    case Reason::kScheduleMemory:
      return "zb-1p/zb-2p: one forward keeps more than the schedule's memory limit";
    case Reason::kMemory:
      return "peak memory over HBM x (1 - headroom) (screen)";
    case Reason::kSimulatedMemory:
      return "peak memory over HBM x (1 - headroom) (simulated)";
    case Reason::kValidate:
      return "rejected by validate";
    case Reason::kTrainer:
      return "the trainer (plan --for) cannot run it";
    case Reason::kCount:
      break;
  }
  return "?";
}

int closed_form_staleness(PipelineSchedule s, int pp, int micro_batches) {
  const auto staleness = strat::schedule_traits(s).staleness;
  return staleness != nullptr ? staleness(pp, micro_batches) : 0;
}

SpaceFacts space_facts(const SearchSpace& space) {
  SpaceFacts f;
  f.first_schedule = space.schedules.front();
  f.max_staleness = space.max_staleness;
  const auto& r = space.recomputes;
  f.none_searched = std::find(r.begin(), r.end(), cost::Recompute::kNone) != r.end();
  const auto& s = space.schedules;
  f.one_f_one_b_searched = std::find(s.begin(), s.end(), PipelineSchedule::kOneFOneB) != s.end();
  const auto& e = space.etps;
  f.etp_tp_searched = std::find(e.begin(), e.end(), 0) != e.end();
  if (!space.cp_comms.empty()) f.first_cp_comm = space.cp_comms.front();
  return f;
}

Reason check_reason(const strat::Scenario& base, const Candidate& c, const SpaceFacts& facts) {
  const PipelineSchedule first_schedule = facts.first_schedule;
  const int max_staleness = facts.max_staleness;
  const bool none_searched = facts.none_searched;
  const auto& m = base.model;
  const auto& t = base.training;
  const int gpn = base.cluster.gpus_per_node;
  const bool low_rank = m.low_rank.enabled();
  const bool zero_bubble = strat::splits_weight_gradient(c.schedule);  // zb-h1/h2, zb-1p/2p
  const bool async = strat::is_asynchronous(c.schedule);
  if (c.pp == 1 && c.schedule != first_schedule) return Reason::kDuplicate;
  if (c.cp == 1 && c.cp_comm != facts.first_cp_comm) return Reason::kDuplicate;
  // A TP overlap without SP (or with tp 1) chunks nothing: the run without it.
  if (c.tp_overlap != strat::TpCommOverlap::kNone && (c.tp == 1 || !c.sequence_parallel)) {
    return Reason::kDuplicate;
  }
  // The overlap's registry entry's rules (strategies/registry/tp_overlap.cpp: the layers it
  // chunks, the framework, the FP8 recipe's library) on the candidate's scenario.
  if (c.tp_overlap != strat::TpCommOverlap::kNone) {
    cost::Diagnostics overlap("candidate");
    const strat::Scenario sc = apply_candidate(base, c);
    for (strat::Rule rule : strat::find_entry(strat::EntryKind::kTpCommOverlap,
                                              strat::tp_comm_overlap_name(c.tp_overlap))
                                ->rules) {
      rule(sc, overlap);
    }
    if (!overlap.ok()) return Reason::kValidate;
  }
  // etp equal to tp is the "as tp" value's run.
  if (c.etp == c.tp && facts.etp_tp_searched) return Reason::kDuplicate;
  // Interleaving one chunk is 1F1B's layout and order; only Megatron's interleaved warm-up
  // (2 (P - s - 1) forwards, pipeline_schedule.cpp) would hold more activations: one row, 1f1b's.
  if (c.pp > 1 && c.schedule == PipelineSchedule::kInterleaved && c.chunks == 1 &&
      facts.one_f_one_b_searched) {
    return Reason::kDuplicate;
  }
  // FlashAttention stores nothing the attention core's selective recompute would drop, so the
  // two runs are the same (activation_memory.hpp); kept only when "none" is not searched. Other
  // modules (mlp, layernorm, moe, moe_act, shared_experts) make another run.
  if (none_searched && c.attention == strat::AttentionKind::kFlash &&
      c.recompute == cost::Recompute::kSelective &&
      base.training.recompute_modules == cost::RecomputeModules{}) {
    return Reason::kDuplicate;
  }
  // Megatron's modules: the selective entry's rules on the candidate's scenario.
  if (c.recompute == cost::Recompute::kSelective &&
      !(base.training.recompute_modules == cost::RecomputeModules{})) {
    cost::Diagnostics selective("candidate");
    for (strat::Rule rule : strat::find_entry(strat::EntryKind::kRecompute, "selective")->rules) {
      rule(apply_candidate(base, c), selective);
    }
    if (!selective.ok()) return Reason::kValidate;
  }
  // Megatron's grouped full recompute (checkpoint_groups.hpp): the full entry's rules (no ZeRO-3,
  // FSDP2 or B/W split with it; block's layer count within a virtual stage).
  if (c.recompute == cost::Recompute::kFull && strat::grouped_recompute(base.training)) {
    cost::Diagnostics full("candidate");
    for (strat::Rule rule : strat::find_entry(strat::EntryKind::kRecompute, "full")->rules) {
      rule(apply_candidate(base, c), full);
    }
    if (!full.ok()) return Reason::kValidate;
  }
  // torchtitan's per-op policy: its registry entry's rules on the candidate's scenario.
  if (c.recompute == cost::Recompute::kPerOp) {
    cost::Diagnostics per_op("candidate");
    for (strat::Rule rule : strat::find_entry(strat::EntryKind::kRecompute, "per-op")->rules) {
      rule(apply_candidate(base, c), per_op);
    }
    if (!per_op.ok()) return Reason::kValidate;
  }
  // Megatron's DDP layout and --overlap-param-gather: the sharding entry's rules (sharding.cpp,
  // megatron_ddp) on the candidate's scenario.
  if (base.parallel.dp_bucket_layout == strat::DpBucketLayout::kMegatron ||
      base.parallel.overlap_param_gather) {
    const strat::Scenario sc = apply_candidate(base, c);
    const std::string sharding = c.fsdp2 ? "fsdp2" : fmt::format("zero-{}", c.zero_stage);
    cost::Diagnostics ddp("candidate");
    for (strat::Rule rule : strat::find_entry(strat::EntryKind::kSharding, sharding)->rules) {
      rule(sc, ddp);
    }
    if (!ddp.ok()) return Reason::kValidate;
  }
  if (m.heads % c.tp != 0 || m.kv_heads % c.tp != 0) return Reason::kHeads;
  bool split_exists = true;
  uneven_stage_layers(m.layers, c, &split_exists);
  if (c.pp > m.layers || !split_exists) return Reason::kLayers;
  // Chunks: interleaved-1f1b any (one: 1f1b's duplicate above), interleaved-zb two or more
  // (torchtitan runs InterleavedZeroBubble with at least two stages a rank), the V exactly two.
  const bool loop = c.schedule == PipelineSchedule::kInterleaved ||
                    c.schedule == PipelineSchedule::kInterleavedZb;
  if (strat::places_chunks_in_v(c.schedule) ? c.chunks != strat::kVShapeChunks
                                            : (c.chunks > 1 && !loop)) {
    return Reason::kChunks;
  }
  if (c.schedule == PipelineSchedule::kInterleavedZb && c.chunks == 1) return Reason::kChunks;
  const long long per_step = static_cast<long long>(c.micro_batch) * c.dp;
  if (t.global_batch % per_step != 0 || t.global_batch / per_step > (1 << 16)) {
    return Reason::kBatch;
  }
  const long long mbs = t.global_batch / per_step;
  if (c.schedule == PipelineSchedule::kInterleaved &&
      strat::interleaved_group_problem(c.pp, mbs, base.parallel.microbatch_group)) {
    return Reason::kInterleavedBatch;
  }
  if (c.schedule == PipelineSchedule::kInterleavedZb &&
      strat::interleaved_zb_batch_problem(c.pp, mbs)) {
    return Reason::kInterleavedBatch;
  }
  if (c.schedule == PipelineSchedule::kDualPipeV && mbs < 2LL * c.pp) {
    return Reason::kInterleavedBatch;
  }
  if (async && (c.optimizer != strat::OptimizerKind::kAdamW || c.zero_stage > 1 || c.fsdp2 ||
                c.offload != cost::OffloadFlavour::kNone)) {
    return Reason::kAsync;
  }
  if (c.zero_stage == 3 && !c.fsdp2 && c.schedule != PipelineSchedule::kGpipe &&
      c.schedule != PipelineSchedule::kOneFOneB) {
    return Reason::kZero3;
  }
  // FSDP2 (strategies/registry/sharding.cpp, fsdp2_layouts): gpipe, 1f1b, interleaved; dense
  // models; HSDP's replicas dividing dp; an integer reshard dividing the shard group.
  if (c.fsdp2) {
    const auto& f = base.parallel.fsdp2;
    const bool schedule_ok = c.schedule == PipelineSchedule::kGpipe ||
                             c.schedule == PipelineSchedule::kOneFOneB ||
                             c.schedule == PipelineSchedule::kInterleaved;
    const int shard = c.dp % f.replicate == 0 ? c.dp / f.replicate * c.cp : 0;
    const int n = f.reshard_after_forward.value_or(strat::Fsdp2Spec::kShardGroup);
    if (!schedule_ok || m.moe.enabled() || c.placement != TpPlacement::kMegatron || shard < 2 ||
        (n != strat::Fsdp2Spec::kShardGroup && shard % n != 0)) {
      return Reason::kFsdp2;
    }
  }
  if (low_rank && c.placement == TpPlacement::kMegatron) return Reason::kPlacement;
  if (c.placement == TpPlacement::kTsp) {
    if (c.tp == 1 || low_rank || c.sequence_parallel || c.cp > 1 ||
        c.attention != strat::AttentionKind::kFlash || m.seq_len % c.tp != 0 || c.zero_stage == 3 ||
        zero_bubble || c.recompute == cost::Recompute::kSelective) {
      return Reason::kPlacement;
    }
    const int buckets = base.parallel.tsp_kv_buckets;
    if (buckets > 1 && m.kv_heads % (static_cast<long long>(c.tp) * buckets) != 0) {
      return Reason::kPlacement;
    }
  } else {
    if (!low_rank && c.placement != TpPlacement::kMegatron) return Reason::kPlacement;
    if (base.parallel.tsp_kv_buckets != 1) return Reason::kPlacement;
  }
  if (low_rank && c.placement == TpPlacement::kVanilla &&
      (m.low_rank.attn_rank % c.tp != 0 || m.low_rank.mlp_rank % c.tp != 0)) {
    return Reason::kPlacement;
  }
  if (low_rank && (c.sequence_parallel || zero_bubble || c.recompute != cost::Recompute::kNone)) {
    return Reason::kPlacement;
  }
  if (base.parallel.lowrank_checkpointing && c.placement != TpPlacement::kBtp) {
    return Reason::kPlacement;
  }
  if (base.parallel.paci_mode == strat::PaciMode::kMem && c.schedule != PipelineSchedule::kPaci) {
    return Reason::kAsync;
  }
  if (m.mla.enabled() && c.placement != TpPlacement::kMegatron) return Reason::kPlacement;
  if (c.cp > 1) {
    if (m.mla.enabled()) return Reason::kContextParallel;
    if (m.seq_len % (2 * c.cp) != 0 || c.attention != strat::AttentionKind::kFlash || low_rank ||
        (c.zero_stage == 3 && !c.fsdp2) || c.chunks > 1 || zero_bubble) {
      return Reason::kContextParallel;
    }
    // strategies/registry/context_parallel.cpp's all-to-all rules, restated: a2a+p2p's group a
    // proper divisor of cp; each TP rank's heads and kv heads split over the all-to-all group.
    const bool a2a = c.cp_comm == strat::CpComm::kAllToAll;
    if (c.cp_comm == strat::CpComm::kAllToAllP2p &&
        (c.cp_a2a_size < 2 || c.cp % c.cp_a2a_size != 0 || c.cp_a2a_size == c.cp)) {
      return Reason::kContextParallel;
    }
    const long long group = a2a ? c.cp : c.cp_a2a_size;
    const long long kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    if ((a2a || c.cp_comm == strat::CpComm::kAllToAllP2p) &&
        ((m.heads / c.tp) % group != 0 || (kv / c.tp) % group != 0)) {
      return Reason::kContextParallel;
    }
  }
  if (c.tp > 1 && c.tp <= gpn && gpn % c.tp != 0) return Reason::kTpNodes;
  if (c.tp > gpn && c.tp % gpn != 0) return Reason::kTpNodes;
  const int replicas = c.dp * c.cp;
  if (replicas > 1 && uneven_groups(c.tp, replicas, c.pp, gpn)) return Reason::kUnevenGroups;
  const int nodes = c.gpus >= gpn ? c.gpus / gpn : 1;
  const long long stride = static_cast<long long>(c.tp) * c.dp * c.cp;
  if (base.cluster.rails_only && nodes > 1) {
    if (c.pp > 1 && stride % gpn != 0 && stride * c.pp > gpn) return Reason::kRails;
    const long long group = static_cast<long long>(c.tp) * c.cp;
    if (c.cp > 1 && c.tp % gpn != 0 && gpn % group != 0) return Reason::kRails;
    if (c.placement == TpPlacement::kTsp && c.tp > gpn) return Reason::kRails;
  }
  if (m.hidden % c.tp != 0 || m.ffn_hidden % c.tp != 0) return Reason::kHidden;
  if (c.sequence_parallel && c.tp == 1) return Reason::kSequenceParallel;
  if (m.moe.enabled()) {
    // strategies/registry/dispatchers.cpp's rules, restated.
    const int etp = expert_tp(c);
    const long long stage_gpus = static_cast<long long>(c.tp) * c.cp * c.dp;
    if (m.moe.experts % c.ep != 0 || stage_gpus % (static_cast<long long>(etp) * c.ep) != 0 ||
        m.moe.expert_ffn_hidden % etp != 0 || (c.tp > 1 && !c.sequence_parallel) ||
        c.zero_stage == 3 || c.cp > 1 || c.placement != TpPlacement::kMegatron ||
        c.optimizer != strat::OptimizerKind::kAdamW || strat::is_searched(c.schedule) ||
        (base.parallel.moe_shared_expert_overlap &&
         (c.dispatcher == strat::MoeDispatcher::kAllGather || m.moe.shared_experts == 0)) ||
        (c.dispatcher == strat::MoeDispatcher::kFlex &&
         cost::deepep_group_problem(etp * c.ep, node_size(base, c)))) {
      return Reason::kExperts;
    }
  } else if (c.ep > 1 || (c.etp > 0 && c.etp != c.tp) || base.parallel.moe_shared_expert_overlap) {
    return Reason::kExperts;
  }
  if (base.cluster.device.peak(t.precision).flop_per_s <= 0) return Reason::kPrecision;
  if (c.recipe != cost::QuantRecipe::kNone) {
    // strategies/registry/precisions.cpp's rules, restated: the device runs the recipe; FP8
    // parameters gather with the ZeRO stage their library gathers with.
    const auto& dev = base.cluster.device;
    if (!(dev.peak_fp8.flop_per_s > 0) || cost::quant_recipe_refusal(c.recipe, dev.architecture) ||
        m.low_rank.enabled() || c.placement == TpPlacement::kTsp) {
      return Reason::kPrecision;
    }
    const strat::Fp8Spec f = strat::fp8_with_recipe(t.fp8, c.recipe);
    if (f.param_gather) {
      const bool te =
          cost::quant_recipe_info(c.recipe).library == cost::QuantLibrary::kTransformerEngine;
      if (te ? (c.zero_stage < 1 || c.zero_stage > 2) : c.zero_stage != 3)
        return Reason::kPrecision;
    }
    if (std::max(f.bf16_layers_at_start, f.bf16_layers_at_end) > m.layers / c.pp ||
        f.bf16_layers_at_start + f.bf16_layers_at_end >= m.layers) {
      return Reason::kPrecision;
    }
  }
  if (c.optimizer == strat::OptimizerKind::kShampoo && c.stacking != strat::Stacking::kNone) {
    return Reason::kValidate;
  }
  if (max_staleness >= 0 &&
      closed_form_staleness(c.schedule, c.pp, static_cast<int>(mbs)) > max_staleness) {
    return Reason::kStaleness;
  }
  return Reason::kOk;
}

}  // namespace parasim::plan
