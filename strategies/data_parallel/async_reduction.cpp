// Workload builder: data parallelism under the asynchronous schedules (PipeDream's hybrid
// pipeline, PipeDream-2BW and PACI with several pipeline replicas).
#include "strategies/workload/workload_builder_impl.hpp"

namespace parasim::strat::detail {

// Before a stage-local optimizer step, the gradients the stage accumulated since its previous
// step are all-reduced with the same stage of every other replica: PipeDream's hybrid
// parallelism (Narayanan et al. 2019, arXiv 1806.03377, sec. 3.1: "the stage is replicated and
// its gradients all-reduced"; one step per micro-batch), PipeDream-2BW's data parallelism
// (arXiv 2006.09503, sec. 3.1: after each group of m micro-batches) and PACI's local gradient
// accumulation over a = m micro-batches before the reduction (docs/schedules.md); with ZeRO-1
// a reduce-scatter, each replica stepping its shard (emit_async_param_gather). The
// reduction starts when the step's last backward is done (a local accumulation has nothing to
// send earlier), in buckets of parallel.dp_bucket (one bucket when 0); the dense gradients over
// the dp x cp group, the local experts' over the expert data-parallel group. Each bucket's call
// is issued by the host op of the optimizer item. Returns, per simulated rank k = d x tp + r,
// the reductions the step waits for.
std::vector<std::vector<OpId>> Builder::emit_async_gradient_reduction(int stage, int step) {
  auto& w = out_.workload;
  const auto ranks = static_cast<std::size_t>(dp_sim_ * tp_sim_);
  std::vector<std::vector<OpId>> waits(ranks);
  if (replicas_ == 1) return waits;
  const LayerParams held = stage_params(stage);
  const double grad_elem = sc_.training.gradient_bytes();
  const double cap = sc_.parallel.dp_bucket.value;
  // ZeRO-1 (Megatron's distributed optimizer): reduce-scattered, each replica stepping its shard.
  const bool sharded = sc_.parallel.zero_stage >= 1;
  const auto kind =
      sharded ? cost::CollectiveKind::kReduceScatter : cost::CollectiveKind::kAllReduce;
  // The stage's `bytes` in buckets of `cap`, the last one taking the rest.
  auto buckets = [&](double bytes) {
    std::vector<double> out;
    while (cap > 0 && bytes > cap) {
      out.push_back(cap);
      bytes -= cap;
    }
    if (bytes > 0) out.push_back(bytes);
    return out;
  };
  auto reduce = [&](const std::vector<std::size_t>& members, const cost::GroupPlacement& place,
                    double bytes, const char* label, int group_size) {
    for (double bucket : buckets(bytes)) {
      const auto plan = costs_.collective(kind, cost::Bytes{bucket}, place);
      const auto g = emit_collective(members, &DeviceStreams::dp, plan, label, cat_dp_, step,
                                     CommKind::kDataParallel, group_size);
      for (std::size_t i = 0; i < members.size(); ++i) {
        const std::size_t dev = members[i];
        const OpId member = w.members(g)[i];
        w.add_dependency(final_backward_[dev], member);
        host_issue(dev, member, StepHost{fw_.host.collective_call, fw_.host.collective_call},
                   sim::Time::zero(), true);
        const auto k = static_cast<std::size_t>(out_.devices[dev].dp_rank * tp_sim_ +
                                                out_.devices[dev].tp_rank);
        waits[k].push_back(member);
      }
    }
  };
  for (int r = 0; r < tp_sim_; ++r) {
    std::vector<std::size_t> members;
    for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
    reduce(members, layout_.dp_group(stage, r), held.dense * grad_elem,
           sharded ? "grad reduce-scatter" : "grad all-reduce", replicas_);
  }
  const int edp = sc_.model.moe.enabled() ? sc_.parallel.edp() : 1;
  if (edp > 1 && held.expert > 0) {
    for (int d = 0; d < dp_sim_; ++d) {
      for (int r = 0; r < tp_sim_; ++r) {
        const std::vector<std::size_t> members = expert_data_members(stage, d, r);
        if (members.front() != index(stage, d, r)) continue;  // each group once
        reduce(members, expert_data_placement(stage, d, r), held.expert * grad_elem,
               sharded ? "expert grad reduce-scatter" : "expert grad all-reduce", edp);
      }
    }
  }
  return waits;
}

// ZeRO-1: after each replica stepped its shard of the stage, the updated weights all-gathered
// back (the training precision; gathered size the whole stage's dense part over dp x cp, the
// local experts' over their own group), as the synchronous step does (emit_data_parallel,
// emit_expert_param_gather). The next forward on the
// stage waits for it (emit_stage). Per simulated rank k, the gather's member or kNone.
std::vector<OpId> Builder::emit_async_param_gather(int stage, int step,
                                                   const std::vector<OpId>& steps) {
  auto& w = out_.workload;
  std::vector<OpId> gathered(steps.size(), kNone);
  if (replicas_ == 1 || sc_.parallel.zero_stage == 0) return gathered;
  const LayerParams held = stage_params(stage);
  const double bytes = gathered_parameter_bytes(sc_, held.dense, stage_fp8_weights(stage).elements);
  for (int r = 0; r < tp_sim_; ++r) {
    const auto plan = costs_.collective(cost::CollectiveKind::kAllGather, cost::Bytes{bytes},
                                        layout_.dp_group(stage, r));
    std::vector<std::size_t> members;
    for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
    const auto g = emit_collective(members, &DeviceStreams::dp, plan, "param all-gather", cat_dp_,
                                   step, CommKind::kDataParallel, replicas_);
    for (int d = 0; d < dp_sim_; ++d) {
      const auto k = static_cast<std::size_t>(d * tp_sim_ + r);
      const OpId member = w.members(g)[static_cast<std::size_t>(d)];
      w.add_dependency(steps[k], member);
      host_issue(members[static_cast<std::size_t>(d)], member,
                 StepHost{fw_.host.collective_call, fw_.host.collective_call}, sim::Time::zero(),
                 true);
      gathered[k] = member;
    }
  }
  // The local experts over their own group (emit_expert_param_gather), after the dense gather on
  // the same dp stream: the next passes, waiting for it, wait for both.
  std::vector<std::vector<OpId>> by_rank(static_cast<std::size_t>(tp_sim_),
                                         std::vector<OpId>(static_cast<std::size_t>(dp_sim_)));
  for (int d = 0; d < dp_sim_; ++d) {
    for (int r = 0; r < tp_sim_; ++r) {
      by_rank[static_cast<std::size_t>(r)][static_cast<std::size_t>(d)] =
          steps[static_cast<std::size_t>(d * tp_sim_ + r)];
    }
  }
  const std::vector<OpId> experts = emit_expert_param_gather(stage, by_rank, step);
  for (std::size_t k = 0; k < gathered.size(); ++k) {
    if (experts[k] != kNone) gathered[k] = experts[k];
  }
  return gathered;
}

}  // namespace parasim::strat::detail
