// The screen's sharded-weight times per layer and micro-batch (screen.hpp): ZeRO-3's gathers and
// reduce-scatter (Screen::zero3_times, strategies/data_parallel/zero3_gather_units.hpp) and
// FSDP2's per-unit gathers, reductions and copy kernels (Screen::fsdp2_times,
// strategies/data_parallel/fsdp2_units.hpp), the builder's own calls, cached by the layout.
#include <algorithm>

#include "planner/screen.hpp"
#include "strategies/data_parallel/fsdp2_units.hpp"
#include "strategies/data_parallel/zero3_gather_units.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/workload/rank_layout.hpp"

namespace parasim::plan {
namespace {

double seconds(sim::Time t) {
  return t.to_seconds();
}

}  // namespace

std::pair<double, double> Screen::zero3_times(const Candidate& c) {
  const ScreenKey key{
      {c.gpus, c.tp, c.pp, c.dp, c.cp, static_cast<int>(c.recipe), static_cast<int>(c.offload)}};
  auto it = zero3_.find(key);
  if (it != zero3_.end()) return it->second;
  const cost::CostModel& costs = costs_.at(c.gpus);
  const strat::RankLayout layout(screen_replica_spec(c), node_size(base_, c));
  const strat::Zero3Gathering& z3 = base_.training.framework.zero3;
  std::pair<double, double> t{0, 0};
  if (c.dp * c.cp > 1) {
    const cost::GroupPlacement g = layout.dp_group(0, 0);
    // The same calls the builder emits, back to back on the dp stream.
    const strat::Scenario sc = apply_candidate(base_, c);
    const double element_bytes = strat::zero3_gathered_element_bytes(sc);
    // ZeRO-Infinity's offload_param: each gather's partition copied in first, on its stream.
    const bool offloaded = sc.parallel.offload.params && sc.parallel.offload.enabled();
    for (double elements : strat::zero3_gather_units(base_.model, c.tp, z3)) {
      if (offloaded) {
        t.first += seconds(cost::host_copy_time(
            costs.cluster().host,
            strat::zero3_partition_h2d_bytes(elements, c.dp * c.cp,
                                             cost::bytes_per_element(sc.training.precision))));
      }
      t.first +=
          seconds(cost::estimate_time(costs.collective(cost::CollectiveKind::kAllGather,
                                                       cost::Bytes{elements * element_bytes}, g),
                                      costs.cluster()));
      // A blocking fetch (DeepSpeed 2021) holds the host for each gather.
      if (z3.blocking_fetch) {
        t.first += seconds(strat::zero3_blocking_fetch_host(base_.training.framework, g.size));
      }
    }
    for (double elements : strat::zero3_reduce_calls(base_.model, c.tp, z3)) {
      t.second += seconds(cost::estimate_time(
          costs.collective(cost::CollectiveKind::kReduceScatter,
                           cost::Bytes{elements * base_.training.gradient_bytes()}, g),
          costs.cluster()));
    }
  }
  return zero3_.emplace(key, t).first->second;
}

const Screen::Fsdp2Times& Screen::fsdp2_times(const Candidate& c) {
  const ScreenKey key{{c.gpus, c.tp, c.pp, c.dp, c.cp, static_cast<int>(c.recipe), c.micro_batch,
                       static_cast<int>(c.offload)}};
  auto it = fsdp2_.find(key);
  if (it != fsdp2_.end()) return it->second;
  const strat::Scenario sc = apply_candidate(base_, c);
  const cost::CostModel& costs = costs_.at(c.gpus);
  const strat::RankLayout layout(screen_replica_spec(c), node_size(base_, c));
  const double elements = strat::layer_params_per_tp_rank(base_.model, c.tp);
  const int shard = sc.parallel.fsdp2_shard();
  const int replicate = sc.parallel.fsdp2.replicate;
  const int after = strat::fsdp2_post_forward_ranks(sc, strat::Fsdp2UnitKind::kBlock);
  const double gathered = strat::fsdp2_gather_bytes(sc, elements, strat::Fsdp2UnitKind::kBlock);
  const strat::Fsdp2CopyBytes copies = strat::fsdp2_copy_bytes(sc, elements);
  // CPUOffloadPolicy: a gather from the full shard copies it in first, on the same stream; each
  // reduction copies its shard out on the reduction's stream (fsdp2_units.hpp).
  const strat::Fsdp2HostCopyBytes host = strat::fsdp2_host_copy_bytes(sc, elements);
  const double h2d = cost::host_copy_time(costs.cluster().host, host.gather_h2d).to_seconds();
  const double d2h = cost::host_copy_time(costs.cluster().host, host.reduce_d2h).to_seconds();
  // The same calls and kernels the builder emits (fsdp2_emission.cpp).
  auto collective = [&](cost::CollectiveKind kind, double bytes, const cost::GroupPlacement& g) {
    return (cost::estimate_time(costs.collective(kind, cost::Bytes{bytes}, g), costs.cluster()))
        .to_seconds();
  };
  auto gather = [&](int ranks) {
    if (ranks <= 1) return 0.0;
    const double in_bytes = ranks < shard
                                ? strat::fsdp2_post_forward_copy_in_bytes(sc, elements, ranks)
                                : copies.gather_copy_in;
    return (ranks < shard ? 0.0 : h2d) +
           costs.memory_bound_body(cost::Bytes{in_bytes}).to_seconds() +
           collective(cost::CollectiveKind::kAllGather, gathered,
                      layout.replica_block_group(0, 0, ranks));
  };
  const double copy_out = costs.memory_bound(cost::Bytes{copies.gather_copy_out}).to_seconds();
  const double copy_in = costs.memory_bound(cost::Bytes{copies.reduce_copy_in}).to_seconds();
  double reduce = shard > 1 ? collective(cost::CollectiveKind::kReduceScatter,
                                         strat::fsdp2_reduce_bytes(sc, elements),
                                         layout.replica_block_group(0, 0, shard))
                            : 0.0;
  if (replicate > 1) {
    reduce += collective(cost::CollectiveKind::kAllReduce,
                         strat::fsdp2_replica_reduce_bytes(sc, elements),
                         layout.replica_strided_group(0, 0, replicate, shard));
  }
  reduce += d2h;
  Fsdp2Times t;
  const int m = base_.training.global_batch / (c.micro_batch * c.dp);
  if (strat::fsdp2_reduces_every_micro_batch(sc)) {
    t.gather_forward = gather(shard);
    t.gather_backward = gather(after == shard ? shard : after);
    t.reduce = reduce;
    t.compute_forward = copy_out;
    t.compute_backward = (after == 1 ? 0.0 : copy_out) + copy_in;
  } else {
    // Pipelining: no resharding after the backward, so a forward after a backward finds its
    // block whole; resharded after the forward (after > 1), every backward gathers it again.
    // Forwards after a backward find the block whole: the warm-up's gathers (1F1B: up to pp of
    // them on stage 0; GPipe and interleaving: every forward, a bound) or, kept whole after the
    // forward, the step's first.
    const double warm = after == 1 ? 1.0
                        : c.schedule == strat::PipelineSchedule::kOneFOneB
                            ? static_cast<double>(std::min(m, c.pp))
                            : static_cast<double>(m);
    t.gather_forward = gather(shard) * warm / m;
    t.gather_backward = after == 1 ? 0.0 : gather(after);
    t.compute_forward = copy_out / m;
    t.compute_backward = (after == 1 ? 0.0 : copy_out) +
                         costs.memory_bound(cost::Bytes{copies.unsharded_accumulate}).to_seconds();
    t.reduce_at_end =
        reduce +
        costs.memory_bound(cost::Bytes{2 * strat::fsdp2_reduce_bytes(sc, elements)}).to_seconds();
  }
  return fsdp2_.emplace(key, t).first->second;
}

}  // namespace parasim::plan
