// Workload builder: data parallelism (gradient buckets, ZeRO 1-3) and the optimizer step.
#include "strategies/optimizer_shampoo.hpp"
#include "strategies/workload_builder_impl.hpp"

namespace parasim::strat::detail {

void Builder::zero3_gather(int stage, int mb, const std::string& where,
                           const std::vector<OpId>& prefetch_after) {
  auto& w = out_.workload;
  const double layer_bytes = layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) *
                             cost::bytes_per_element(sc_.training.precision);
  const double dp = replicas_;
  for (int r = 0; r < tp_sim_; ++r) {
    const auto plan = costs_.collective(cost::CollectiveKind::kAllGather, cost::Bytes{layer_bytes},
                                        layout_.dp_group(stage, r));
    std::vector<std::size_t> members;
    for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
    const sim::GroupId g = emit_collective(members, &DeviceStreams::dp, plan,
                                           where + "zero3 all-gather", cat_dp_, mb,
                                           CommKind::kDataParallel, replicas_);
    for (int d = 0; d < dp_sim_; ++d) {
      const std::size_t k = static_cast<std::size_t>(d * tp_sim_ + r);
      const OpId op = w.members(g)[static_cast<std::size_t>(d)];
      if (prefetch_after[k] != kNone) w.add_dependency(prefetch_after[k], op);
      alloc(op, mem_zero3_, layer_bytes * (dp - 1) / dp, true);
      pending_[k] = op;  // the layer's first op waits for its weights
    }
  }
}


void Builder::zero3_reduce(int stage, int mb, const std::string& where,
                           const std::vector<OpId>& chain) {
  auto& w = out_.workload;
  const double grad_bytes =
      layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) * sc_.training.gradient_bytes();
  for (int r = 0; r < tp_sim_; ++r) {
    const auto plan = costs_.collective(cost::CollectiveKind::kReduceScatter,
                                        cost::Bytes{grad_bytes}, layout_.dp_group(stage, r));
    std::vector<std::size_t> members;
    for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
    const sim::GroupId g = emit_collective(members, &DeviceStreams::dp, plan,
                                           where + "zero3 reduce-scatter", cat_dp_, mb,
                                           CommKind::kDataParallel, replicas_);
    for (int d = 0; d < dp_sim_; ++d) {
      w.add_dependency(chain[static_cast<std::size_t>(d * tp_sim_ + r)],
                       w.members(g)[static_cast<std::size_t>(d)]);
    }
  }
}


sim::Time Builder::stage_optimizer_time(int stage) const {
  const bool mixed = sc_.training.precision != cost::Dtype::kFp32;
  const double params = sc_.stage_layer_count(stage) * layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) +
                        embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp, stage, pp_);
  const double updated = sc_.parallel.zero_stage >= 1 ? params / replicas_ : params;
  return costs_.memory_bound(cost::Bytes{adamw_step_bytes(updated, mixed)});
}


void Builder::emit_data_parallel(int stage) {
  auto& w = out_.workload;
  const int zero = sc_.parallel.zero_stage;
  const double grad_elem = sc_.training.gradient_bytes();
  const auto reduce = zero >= 1 ? cost::CollectiveKind::kReduceScatter
                                : cost::CollectiveKind::kAllReduce;
  const double stage_params = sc_.stage_layer_count(stage) * layer_params_per_tp_rank(sc_.model, sc_.parallel.tp) +
                              embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp, stage, pp_);
  const sim::Time step_time = stage_optimizer_time(stage);
  for (int r = 0; r < tp_sim_; ++r) {
    std::vector<std::vector<OpId>> waits(static_cast<std::size_t>(dp_sim_));
    const auto& chunks = grad_ready_[index(stage, 0, r)];
    double bucket = 0;
    int bucket_index = 0;
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      bucket += chunks[c].second * grad_elem;
      const bool flush = bucket >= sc_.parallel.dp_bucket.value || c + 1 == chunks.size();
      if (!flush || replicas_ == 1) continue;
      const auto plan = costs_.collective(reduce, cost::Bytes{bucket}, layout_.dp_group(stage, r));
      std::vector<std::size_t> members;
      for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
      const auto g = emit_collective(members, &DeviceStreams::dp, plan,
                                     zero >= 1 ? "grad reduce-scatter" : "grad all-reduce",
                                     cat_dp_, bucket_index++, CommKind::kDataParallel, replicas_);
      for (int d = 0; d < dp_sim_; ++d) {
        const OpId member = w.members(g)[static_cast<std::size_t>(d)];
        w.add_dependency(grad_ready_[index(stage, d, r)][c].first, member);
        waits[static_cast<std::size_t>(d)].push_back(member);
      }
      bucket = 0;
    }
    std::vector<OpId> steps;
    if (sc_.optimizer.kind != OptimizerKind::kAdamW) {
      emit_shampoo(stage, r, waits);
      continue;
    }
    for (int d = 0; d < dp_sim_; ++d) {
      const std::size_t dev = index(stage, d, r);
      const OpId op = w.add_compute(streams_[dev].compute, step_time, w.intern("adamw step"),
                                    cat_opt_);
      w.add_dependency(final_backward_[dev], op);
      for (OpId m : waits[static_cast<std::size_t>(d)]) w.add_dependency(m, op);
      steps.push_back(op);
    }
    if (zero >= 1 && zero <= 2 && replicas_ > 1) {
      // Updated weights (training precision) all-gathered back to every replica (gathered
      // size: whole stage).
      const auto plan = costs_.collective(
          cost::CollectiveKind::kAllGather,
          cost::Bytes{stage_params * cost::bytes_per_element(sc_.training.precision)},
          layout_.dp_group(stage, r));
      std::vector<std::size_t> members;
      for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
      const auto g = emit_collective(members, &DeviceStreams::dp, plan, "param all-gather",
                                     cat_dp_, -1, CommKind::kDataParallel, replicas_);
      for (int d = 0; d < dp_sim_; ++d) {
        w.add_dependency(steps[static_cast<std::size_t>(d)],
                         w.members(g)[static_cast<std::size_t>(d)]);
      }
    }
  }
}

// Shampoo / DASH: factor update, inverse roots and preconditioning on the compute stream, then
// the all-gather of the updates each rank computed for its blocks (optimizer_shampoo.hpp).
void Builder::emit_shampoo(int stage, int r, const std::vector<std::vector<OpId>>& waits) {
  auto& w = out_.workload;
  const ShampooStepCost c = shampoo_cost(stage);
  if (stage == 0) {
    out_.optimizer_host_ops = c.host_ops;
    out_.optimizer_host_syncs = c.host_syncs;
  }
  std::vector<OpId> last;
  for (int d = 0; d < dp_sim_; ++d) {
    const std::size_t dev = index(stage, d, r);
    OpId prev = final_backward_[dev];
    bool first = true;
    for (const auto& [label, time] : {std::pair{"factor update", c.factor_update},
                                      std::pair{"inverse roots", c.inverse_roots},
                                      std::pair{"precondition and grafting", c.precondition}}) {
      const OpId op = w.add_compute(streams_[dev].compute, time, w.intern(label), cat_opt_);
      w.add_dependency(prev, op);
      if (first) {
        for (OpId m : waits[static_cast<std::size_t>(d)]) w.add_dependency(m, op);
        first = false;
      }
      prev = op;
    }
    last.push_back(prev);
  }
  if (replicas_ <= 1) return;
  const auto plan = costs_.collective(cost::CollectiveKind::kAllGather,
                                      cost::Bytes{c.update_bytes}, layout_.dp_group(stage, r));
  std::vector<std::size_t> members;
  for (int d = 0; d < dp_sim_; ++d) members.push_back(index(stage, d, r));
  const auto g = emit_collective(members, &DeviceStreams::dp, plan, "optimizer update all-gather",
                                 cat_dp_, -1, CommKind::kDataParallel, replicas_);
  for (int d = 0; d < dp_sim_; ++d) {
    w.add_dependency(last[static_cast<std::size_t>(d)], w.members(g)[static_cast<std::size_t>(d)]);
  }
}

}  // namespace parasim::strat::detail
