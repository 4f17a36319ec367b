#include "planner/candidate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "strategies/input/stage_split.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::plan {

cost::ClusterSpec cluster_for_gpus(const cost::ClusterSpec& base, int gpus) {
  cost::ClusterSpec c = base;
  const int gpn = base.gpus_per_node;
  if (gpn > 0 && gpus >= gpn) {
    c.nodes = gpus / gpn;
  } else {
    c.nodes = 1;
    c.gpus_per_node = std::max(1, gpus);
  }
  return c;
}

std::vector<int> uneven_stage_layers(int layers, const Candidate& c, bool* valid) {
  *valid = true;
  const bool edges = c.first_stage_layers > 0 || c.last_stage_layers > 0;
  if (!edges && layers % (c.pp * c.chunks) == 0) return {};
  *valid = false;
  if (c.chunks != 1 || c.pp < 2) return {};
  auto count = [](int n) { return n > 0 ? std::optional<int>(n) : std::nullopt; };
  std::vector<int> split =
      edges ? strat::edge_stage_layers(layers, c.pp, count(c.first_stage_layers),
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
  p.sequence_parallel = c.sequence_parallel;
  p.chunks = c.chunks;
  p.schedule = c.schedule;
  p.zero_stage = c.zero_stage;
  p.tp_placement = c.placement;
  // The planner searches even stages: the scenario's own stage_layers belong to its layout
  // (simulated as is for the "yours" row). Optimizer post-validation applies to the
  // zero-bubble schedules only: the scenario's setting is kept for them, the schedule's default
  // (pipeline_schedule.hpp, post_validation) otherwise.
  bool valid = true;
  p.stage_layers = uneven_stage_layers(base.model.layers, c, &valid);
  if (!strat::splits_weight_gradient(c.schedule)) p.optimizer_post_validation.reset();
  s.training.micro_batch = c.micro_batch;
  s.training.recompute = c.recompute;
  s.training.attention = c.attention;
  s.optimizer.kind = c.optimizer;
  s.optimizer.stacking = c.stacking;
  s.optimizer.block_size = c.block_size;
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
  c.sequence_parallel = s.parallel.sequence_parallel;
  c.chunks = s.parallel.chunks;
  c.schedule = s.parallel.schedule;
  c.micro_batch = s.training.micro_batch;
  c.recompute = s.training.recompute;
  c.zero_stage = s.parallel.zero_stage;
  c.attention = s.training.attention;
  c.placement = s.parallel.tp_placement;
  c.optimizer = s.optimizer.kind;
  c.stacking = s.optimizer.stacking;
  c.block_size = s.optimizer.block_size;
  // Its own stage_layers are simulated as written (the "yours" row); as a candidate, the edges.
  if (!s.parallel.stage_layers.empty() && s.parallel.chunks == 1 && s.parallel.pp > 1) {
    c.first_stage_layers = s.parallel.stage_layers.front();
    c.last_stage_layers = s.parallel.stage_layers.back();
  }
  return c;
}

std::string describe(const Candidate& c) {
  std::string out = fmt::format("dp {} tp {} pp {}", c.dp, c.tp, c.pp);
  if (c.cp > 1) out += fmt::format(" cp {}", c.cp);
  if (c.sequence_parallel) out += " SP";
  out += fmt::format(" {}", strat::schedule_name(c.schedule));
  if (c.chunks > 1) out += fmt::format(" v{}", c.chunks);
  out += fmt::format(" mb {} rc {} ZeRO {}", c.micro_batch, cost::recompute_name(c.recompute),
                     c.zero_stage);
  if (c.attention == strat::AttentionKind::kFlash) out += " flash";
  if (c.first_stage_layers > 0) out += fmt::format(" first {}", c.first_stage_layers);
  if (c.last_stage_layers > 0) out += fmt::format(" last {}", c.last_stage_layers);
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
