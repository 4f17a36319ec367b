#include "planner/candidate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <utility>

#include "strategies/input/stage_split.hpp"
#include "strategies/registry/registry.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::plan {

namespace {

// GPUs per node and nodes of `gpus` GPUs of a cluster of `gpn`-GPU nodes.
std::pair<int, int> node_shape(int gpn, int gpus) {
  if (gpn > 0 && gpus >= gpn) return {gpn, gpus / gpn};
  return {std::max(1, gpus), 1};
}

}  // namespace

std::size_t CandidateHash::operator()(const Candidate& c) const {
  std::uint64_t h = 1469598103934665603ull;
  for (std::int64_t x : {c.gpus,
                         c.dp,
                         c.tp,
                         c.pp,
                         c.cp,
                         c.chunks,
                         c.micro_batch,
                         c.zero_stage,
                         static_cast<int>(c.fsdp2),
                         static_cast<int>(c.schedule),
                         static_cast<int>(c.recompute),
                         c.first_stage_layers,
                         c.last_stage_layers,
                         c.ep,
                         c.etp,
                         static_cast<int>(c.cp_comm),
                         c.cp_a2a_size,
                         static_cast<int>(c.offload),
                         static_cast<int>(c.compile),
                         static_cast<int>(c.tp_overlap)}) {
    h = (h ^ static_cast<std::uint64_t>(x)) * 1099511628211ull;
  }
  return static_cast<std::size_t>(h);
}

cost::ClusterSpec cluster_for_gpus(const cost::ClusterSpec& base, int gpus) {
  cost::ClusterSpec c = base;
  std::tie(c.gpus_per_node, c.nodes) = node_shape(base.gpus_per_node, gpus);
  return c;
}

int node_size(const strat::Scenario& base, const Candidate& c) {
  return node_shape(base.cluster.gpus_per_node, c.gpus).first;
}

std::vector<int> uneven_stage_layers(int layers, const Candidate& c, bool* valid) {
  *valid = true;
  const bool edges = c.first_stage_layers > 0 || c.last_stage_layers > 0;
  if (!edges && layers % (c.pp * c.chunks) == 0) return {};
  *valid = false;
  if (c.chunks != 1 || c.pp < 2) return {};
  auto count = [](int n) { return n > 0 ? std::optional<int>(n) : std::nullopt; };
  std::vector<int> split = edges
                               ? strat::edge_stage_layers(layers, c.pp, count(c.first_stage_layers),
                                                          count(c.last_stage_layers))
                               : strat::balanced_edge_split(layers, c.pp);
  *valid = !split.empty();
  return split;
}

strat::Scenario apply_candidate(const strat::Scenario& base, const Candidate& c) {
  strat::Scenario s = base;
  s.cluster = cluster_for_gpus(base.cluster, c.gpus);
  auto& p = s.parallel;
  p.dp = c.dp;
  p.tp = c.tp;
  p.pp = c.pp;
  p.cp = c.cp;
  p.cp_comm = c.cp_comm;
  p.cp_a2a_size = c.cp_a2a_size;
  p.sequence_parallel = c.sequence_parallel;
  p.chunks = c.chunks;
  p.schedule = c.schedule;
  // The scenario's micro-batch group is interleaved-1f1b's: kept for it (a candidate whose pp
  // it does not fit is refused by the rules), dropped for the other schedules.
  if (c.schedule != strat::PipelineSchedule::kInterleaved) p.microbatch_group = 0;
  p.zero_stage = c.zero_stage;
  p.fsdp2.enabled = c.fsdp2;
  if (c.offload != base.parallel.offload.flavour)
    p.offload = cost::OffloadSpec{.flavour = c.offload};
  p.tp_placement = c.placement;
  p.tp_comm_overlap = c.tp_overlap;
  p.ep = c.ep;
  p.etp = c.etp;
  p.moe_dispatcher = c.dispatcher;
  // The planner searches even stages and edge splits; the scenario's own stage_layers belong to
  // its layout (the "yours" row). Optimizer post-validation applies to the zero-bubble schedules
  // only: the scenario's setting is kept for them, the schedule's default (pipeline_schedule.hpp,
  // post_validation) otherwise.
  bool valid = true;
  if (!c.own_stage_layers) p.stage_layers = uneven_stage_layers(base.model.layers, c, &valid);
  if (!strat::splits_weight_gradient(c.schedule)) p.optimizer_post_validation.reset();
  s.training.micro_batch = c.micro_batch;
  s.training.recompute = c.recompute;
  // Megatron's modules go with selective; another mode leaves them at their default.
  if (c.recompute != cost::Recompute::kSelective) s.training.recompute_modules = {};
  if (c.recompute != cost::Recompute::kFull) {  // and Megatron's method with full
    s.training.recompute_method = cost::RecomputeMethod::kUniform;
    s.training.recompute_num_layers = 1;
  }
  s.training.attention = c.attention;
  s.optimizer.kind = c.optimizer;
  s.optimizer.stacking = c.stacking;
  s.optimizer.block_size = c.block_size;
  s.training.fp8 = strat::fp8_with_recipe(base.training.fp8, c.recipe);  // compare's rule
  s.training.framework.compile.enabled = c.compile;
  return s;
}

bool candidate_post_validation(const strat::Scenario& base, const Candidate& c) {
  return strat::splits_weight_gradient(c.schedule) &&
         base.parallel.optimizer_post_validation.value_or(strat::is_searched(c.schedule));
}

Candidate candidate_of(const strat::Scenario& s) {
  Candidate c;
  c.gpus = s.cluster.total_gpus();
  c.dp = s.parallel.dp;
  c.tp = s.parallel.tp;
  c.pp = s.parallel.pp;
  c.cp = s.parallel.cp;
  c.cp_comm = s.parallel.cp_comm;
  c.cp_a2a_size = s.parallel.cp_a2a_size;
  c.sequence_parallel = s.parallel.sequence_parallel;
  c.chunks = s.parallel.chunks;
  c.schedule = s.parallel.schedule;
  c.micro_batch = s.training.micro_batch;
  c.recompute = s.training.recompute;
  c.zero_stage = s.parallel.zero_stage;
  c.fsdp2 = s.parallel.fsdp2.enabled;
  c.offload = s.parallel.offload.flavour;
  c.tp_overlap = s.parallel.tp_comm_overlap;
  c.attention = s.training.attention;
  c.placement = s.parallel.tp_placement;
  c.optimizer = s.optimizer.kind;
  c.stacking = s.optimizer.stacking;
  c.block_size = s.optimizer.block_size;
  c.ep = s.parallel.ep;
  c.etp = s.parallel.etp > 0 && s.parallel.etp != s.parallel.tp ? s.parallel.etp : 0;
  c.dispatcher = s.parallel.moe_dispatcher;
  c.recipe = s.training.fp8.recipe;
  c.compile = s.training.framework.compile.enabled;
  // Its own stage_layers: as first/last counts when they are an edge split (so that the yours
  // row meets the same candidate of the space), else kept as written.
  const auto& own = s.parallel.stage_layers;
  if (!own.empty()) {
    const bool even = std::all_of(own.begin(), own.end(), [&](int n) { return n == own.front(); });
    if (s.parallel.chunks == 1 && s.parallel.pp > 1 && !even &&
        strat::edge_stage_layers(s.model.layers, s.parallel.pp, own.front(), own.back()) == own) {
      c.first_stage_layers = own.front();
      c.last_stage_layers = own.back();
    } else if (!even) {
      c.own_stage_layers = true;
    }
  }
  return c;
}

std::string describe(const Candidate& c) {
  std::string out = fmt::format("dp {} tp {} pp {}", c.dp, c.tp, c.pp);
  if (c.cp > 1) out += fmt::format(" cp {}", c.cp);
  if (c.cp > 1 && c.cp_comm != strat::CpComm::kRing) {
    out += fmt::format(" {}", strat::cp_comm_name(c.cp_comm));
    if (c.cp_comm == strat::CpComm::kAllToAllP2p) out += fmt::format(" {}", c.cp_a2a_size);
  }
  if (c.ep > 1) out += fmt::format(" ep {}", c.ep);
  if (c.etp > 0 && c.etp != c.tp) out += fmt::format(" etp {}", c.etp);
  if (c.recipe != cost::QuantRecipe::kNone) {
    out += fmt::format(" fp8:{}", cost::quant_recipe_name(c.recipe));
  }
  if (c.dispatcher != strat::MoeDispatcher::kAllToAll) {
    out += fmt::format(" {}", strat::moe_dispatcher_name(c.dispatcher));
  }
  if (c.sequence_parallel) out += " SP";
  if (c.tp_overlap != strat::TpCommOverlap::kNone) {
    out += fmt::format(" {}", strat::tp_comm_overlap_name(c.tp_overlap));
  }
  out += fmt::format(" {}", strat::schedule_name(c.schedule));
  if (c.chunks > 1) out += fmt::format(" v{}", c.chunks);
  out += fmt::format(" mb {} rc {} {}", c.micro_batch, cost::recompute_name(c.recompute),
                     c.fsdp2 ? std::string("FSDP2") : fmt::format("ZeRO {}", c.zero_stage));
  if (c.attention == strat::AttentionKind::kFlash) out += " flash";
  if (c.compile) out += " compile";
  if (c.offload != cost::OffloadFlavour::kNone) {
    out += fmt::format(" offload {}", cost::offload_flavour_name(c.offload));
  }
  if (c.first_stage_layers > 0) out += fmt::format(" first {}", c.first_stage_layers);
  if (c.last_stage_layers > 0) out += fmt::format(" last {}", c.last_stage_layers);
  if (c.own_stage_layers) out += " own stages";
  if (c.placement != strat::TpPlacement::kMegatron) {
    out += fmt::format(" {}", strat::tp_placement_name(c.placement));
  }
  if (c.optimizer != strat::OptimizerKind::kAdamW) {
    out += fmt::format(" {}/{}/{}", strat::optimizer_name(c.optimizer),
                       strat::stacking_name(c.stacking), c.block_size);
  }
  return out;
}

}  // namespace parasim::plan
