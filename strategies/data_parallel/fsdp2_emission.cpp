// Workload builder: FSDP2's per-unit all-gathers, reshards and gradient reductions
// (fsdp2_units.hpp has what each moves, with its sources; docs/pytorch-native.md).
#include <fmt/format.h>

#include "strategies/data_parallel/fsdp2_units.hpp"
#include "strategies/workload/workload_builder_impl.hpp"

namespace parasim::strat::detail {
namespace {

Fsdp2UnitKind unit_kind(int unit) {
  return unit == Builder::kFsdp2Embedding ? Fsdp2UnitKind::kEmbedding
         : unit == Builder::kFsdp2Head    ? Fsdp2UnitKind::kHead
                                          : Fsdp2UnitKind::kBlock;
}

}  // namespace

double Builder::fsdp2_unit_elements(int unit) const {
  // Tied embeddings without pipelining: the embedding, norm and head are one unit
  // (apply_fsdp_to_decoder), gathered with the embedding; the head unit is empty.
  const bool one_root = sc_.model.tied_embeddings && pp_ == 1;
  const double head = head_params_per_tp_rank(sc_.model, sc_.parallel.tp, sc_.head_stage());
  if (unit == kFsdp2Embedding) {
    return input_embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp) + (one_root ? head : 0);
  }
  if (unit == kFsdp2Head) return one_root ? 0.0 : head;
  return layer_params_on_rank(sc_.model, sc_.parallel, unit).total();
}

void Builder::fsdp2_unshard(int stage, int mb, const std::string& where, int unit,
                            const std::vector<OpId>& prefetch_after, std::vector<OpId>& chain) {
  auto& w = out_.workload;
  const double elements = fsdp2_unit_elements(unit);
  if (!(elements > 0)) return;
  const int shard = sc_.parallel.fsdp2_shard();
  const double whole = fsdp2_gather_bytes(sc_, elements, unit_kind(unit));
  const Fsdp2CopyBytes copies = fsdp2_copy_bytes(sc_, elements);
  const double h2d_bytes = fsdp2_host_copy_bytes(sc_, elements).gather_h2d;  // CPU offload
  const sim::LabelId ag_label = w.intern(where + "fsdp2 all-gather");
  const sim::LabelId in_label = w.intern(where + "fsdp2 all-gather copy-in");
  const sim::LabelId out_label = w.intern(where + "fsdp2 all-gather copy-out");
  // The copy-out is a kernel of the pass that waits for it (F or B in `where`).
  const sim::LabelId out_category = !where.empty() && where[0] == 'F' ? cat_fwd_ : cat_bwd_;
  for (int r = 0; r < tp_sim_; ++r) {
    for (int d = 0; d < dp_sim_; ++d) {
      const std::size_t dev = index(stage, d, r);
      const auto held_it = fsdp2_held_[dev].find(unit);
      const int held = held_it == fsdp2_held_[dev].end() ? shard : held_it->second;
      if (held == 1) continue;
      // One collective per group of `held` consecutive replicas, emitted from its first member;
      // in symmetric mode the one simulated replica stands for its group.
      const int group_first = dp_sim_ == 1 ? 0 : d / held * held;
      if (d != group_first) continue;
      const int simulated = dp_sim_ == 1 ? 1 : held;
      std::vector<std::size_t> members;
      std::vector<OpId> copy_ins;
      for (int i = 0; i < simulated; ++i) {
        const std::size_t m = index(stage, group_first + i, r);
        members.push_back(m);
        // From the fp32 shard, or from a post-forward shard already in the training precision.
        const double in_bytes = held < shard ? fsdp2_post_forward_copy_in_bytes(sc_, elements, held)
                                             : copies.gather_copy_in;
        const std::size_t k = static_cast<std::size_t>((group_first + i) * tp_sim_ + r);
        OpId h2d = kNone;
        if (held == shard && h2d_bytes > 0) {
          // CPUOffloadPolicy: the fp32 shard to the GPU first, on the copy-in stream, after the
          // CPU step that updated it; freed by the cast (fsdp2_units.hpp, Fsdp2HostCopyBytes).
          h2d = host_copy_on(m, streams_[m].dp, false, h2d_bytes, where + "fsdp2 shard h2d",
                             cat_dp_, mb);
          if (offload_cpu_step_[m] != kNone) w.add_dependency(offload_cpu_step_[m], h2d);
          if (prefetch_after[k] != kNone) w.add_dependency(prefetch_after[k], h2d);
          alloc(h2d, mem_fsdp2_params_, h2d_bytes, true);
        }
        const OpId copy_in = w.add_compute(
            streams_[m].dp, costs_.memory_bound_body(cost::Bytes{in_bytes}), in_label, cat_dp_, mb);
        if (h2d != kNone) {
          w.add_dependency(h2d, copy_in);
          alloc(copy_in, mem_fsdp2_params_, h2d_bytes, false);
        }
        if (prefetch_after[k] != kNone) w.add_dependency(prefetch_after[k], copy_in);
        copy_ins.push_back(copy_in);
      }
      const auto plan = costs_.collective(cost::CollectiveKind::kAllGather, cost::Bytes{whole},
                                          layout_.replica_block_group(stage, group_first, held));
      const sim::GroupId g = emit_collective(members, &DeviceStreams::dp, plan, ag_label, cat_dp_,
                                             mb, CommKind::kDataParallel, held);
      for (int i = 0; i < simulated; ++i) {
        const std::size_t m = members[static_cast<std::size_t>(i)];
        const std::size_t k = static_cast<std::size_t>((group_first + i) * tp_sim_ + r);
        const OpId ag = w.members(g)[static_cast<std::size_t>(i)];
        w.add_dependency(copy_ins[static_cast<std::size_t>(i)], ag);
        alloc(ag, mem_fsdp2_params_, whole, true);  // the all-gather's output
        // The copy-out into the unsharded parameters, on the compute stream (wait_for_unshard).
        const OpId out = w.add_compute(streams_[m].compute,
                                       costs_.memory_bound(cost::Bytes{copies.gather_copy_out}),
                                       out_label, out_category, mb);
        w.add_dependency(ag, out);
        if (chain[k] != kNone) w.add_dependency(chain[k], out);
        chain[k] = out;
        alloc(out, mem_fsdp2_params_, whole, true);
        // The all-gather output, and a post-forward shard kept, freed once copied out.
        alloc(out, mem_fsdp2_params_, whole + (held < shard ? whole / held : 0), false);
        fsdp2_held_[m][unit] = 1;
      }
    }
  }
}

void Builder::fsdp2_after_forward(int stage, int unit, const std::vector<OpId>& chain) {
  const int target = fsdp2_post_forward_ranks(sc_, unit_kind(unit));
  if (target == 1) return;
  const int shard = sc_.parallel.fsdp2_shard();
  const double whole = fsdp2_gather_bytes(sc_, fsdp2_unit_elements(unit), unit_kind(unit));
  for (int d = 0; d < dp_sim_; ++d) {
    for (int r = 0; r < tp_sim_; ++r) {
      const std::size_t dev = index(stage, d, r);
      const OpId last = chain[static_cast<std::size_t>(d * tp_sim_ + r)];
      alloc(last, mem_fsdp2_params_, whole - (target < shard ? whole / target : 0), false);
      fsdp2_held_[dev][unit] = target;
    }
  }
}

void Builder::fsdp2_before_backward(int stage, int unit, const std::vector<OpId>& first) {
  // The unit's unsharded gradients, in the parameters' dtype, from its backward on; freed by the
  // reduce-scatter's copy-in or the accumulation.
  const double grads = fsdp2_unit_elements(unit) * cost::bytes_per_element(sc_.training.precision);
  for (int d = 0; d < dp_sim_; ++d) {
    for (int r = 0; r < tp_sim_; ++r) {
      alloc(first[static_cast<std::size_t>(d * tp_sim_ + r)], mem_fsdp2_grads_, grads, true);
    }
  }
  (void)stage;
}

void Builder::fsdp2_reduce(int stage, int mb, const std::string& where, int unit,
                           double copy_in_bytes, std::vector<OpId>& chain) {
  auto& w = out_.workload;
  const double elements = fsdp2_unit_elements(unit);
  const int shard = sc_.parallel.fsdp2_shard();
  const int replicate = sc_.parallel.fsdp2.replicate;
  const double input = fsdp2_reduce_bytes(sc_, elements);
  const Fsdp2CopyBytes copies = fsdp2_copy_bytes(sc_, elements);
  const double d2h_bytes = fsdp2_host_copy_bytes(sc_, elements).reduce_d2h;  // CPU offload
  // The step's first reduction assigns the sharded gradient; later ones add into it.
  const bool accumulate = fsdp2_reduces_every_micro_batch(sc_) && mb % m_ != 0;
  const sim::LabelId in_label = w.intern(where + "fsdp2 reduce-scatter copy-in");
  const sim::LabelId rs_label = w.intern(where + "fsdp2 reduce-scatter");
  const sim::LabelId ar_label = w.intern(where + "fsdp2 replica all-reduce");
  const sim::LabelId acc_label = w.intern(where + "fsdp2 gradient accumulate");
  const int group = dp_sim_ == 1 ? 1 : shard;
  for (int r = 0; r < tp_sim_; ++r) {
    std::vector<OpId> reduced(static_cast<std::size_t>(dp_sim_), kNone);
    for (int first = 0; first < dp_sim_; first += group) {
      std::vector<std::size_t> members;
      std::vector<OpId> copy_ins;
      for (int i = 0; i < group; ++i) {
        const std::size_t m = index(stage, first + i, r);
        const std::size_t k = static_cast<std::size_t>((first + i) * tp_sim_ + r);
        members.push_back(m);
        const OpId copy_in =
            w.add_compute(streams_[m].compute, costs_.memory_bound(cost::Bytes{copy_in_bytes}),
                          in_label, cat_bwd_, mb);
        if (chain[k] != kNone) w.add_dependency(chain[k], copy_in);
        chain[k] = copy_in;
        alloc(copy_in, mem_fsdp2_grads_, input, true);  // the reduce-scatter input
        copy_ins.push_back(copy_in);
      }
      const auto plan =
          costs_.collective(cost::CollectiveKind::kReduceScatter, cost::Bytes{input},
                            layout_.replica_block_group(stage, dp_sim_ == 1 ? 0 : first, shard));
      const sim::GroupId g = emit_collective(members, &DeviceStreams::fsdp_reduce, plan, rs_label,
                                             cat_dp_, mb, CommKind::kDataParallel, shard);
      for (int i = 0; i < group; ++i) {
        const OpId rs = w.members(g)[static_cast<std::size_t>(i)];
        w.add_dependency(copy_ins[static_cast<std::size_t>(i)], rs);
        alloc(rs, mem_fsdp2_grads_, input, false);
        reduced[static_cast<std::size_t>(first + i)] = rs;
      }
    }
    if (replicate > 1) {
      // HSDP: the shard's gradients all-reduced over the replicas (stride: the shard group).
      const double message = fsdp2_replica_reduce_bytes(sc_, elements);
      const int stride = dp_sim_ == 1 ? 1 : shard;
      const int simulated = dp_sim_ == 1 ? 1 : replicate;
      for (int first = 0; first < (dp_sim_ == 1 ? 1 : shard); ++first) {
        std::vector<std::size_t> members;
        for (int i = 0; i < simulated; ++i) members.push_back(index(stage, first + i * stride, r));
        const auto plan = costs_.collective(
            cost::CollectiveKind::kAllReduce, cost::Bytes{message},
            layout_.replica_strided_group(stage, first, replicate, sc_.parallel.fsdp2_shard(), r));
        const sim::GroupId g =
            emit_collective(members, &DeviceStreams::fsdp_replica, plan, ar_label, cat_dp_, mb,
                            CommKind::kDataParallel, replicate);
        for (int i = 0; i < simulated; ++i) {
          const std::size_t d = static_cast<std::size_t>(first + i * stride);
          const OpId ar = w.members(g)[static_cast<std::size_t>(i)];
          w.add_dependency(reduced[d], ar);
          reduced[d] = ar;
        }
      }
    }
    for (int d = 0; d < dp_sim_; ++d) {
      const std::size_t dev = index(stage, d, r);
      OpId last = reduced[static_cast<std::size_t>(d)];
      if (accumulate) {
        const OpId add = w.add_compute(
            replicate > 1 ? streams_[dev].fsdp_replica : streams_[dev].fsdp_reduce,
            costs_.memory_bound(cost::Bytes{copies.grad_accumulate}), acc_label, cat_dp_, mb);
        w.add_dependency(last, add);
        last = add;
      }
      if (d2h_bytes > 0) {
        // CPUOffloadPolicy: the reduced fp32 shard to the host on the post-reduce stream, its
        // GPU copy held until then (fsdp2_units.hpp, Fsdp2HostCopyBytes).
        const sim::StreamId post_reduce =
            replicate > 1 ? streams_[dev].fsdp_replica : streams_[dev].fsdp_reduce;
        const OpId d2h =
            host_copy_on(dev, post_reduce, true, d2h_bytes, where + "fsdp2 grad d2h", cat_dp_, mb);
        w.add_dependency(last, d2h);
        alloc(last, mem_fsdp2_grads_, d2h_bytes, true);
        alloc(d2h, mem_fsdp2_grads_, d2h_bytes, false);
        last = d2h;
      }
      fsdp2_reduced_[dev].push_back(last);
    }
  }
}

void Builder::fsdp2_after_backward(int stage, int mb, const std::string& where, int unit,
                                   std::vector<OpId>& chain) {
  const double elements = fsdp2_unit_elements(unit);
  if (!(elements > 0)) return;
  const double grads = elements * cost::bytes_per_element(sc_.training.precision);
  const double whole = fsdp2_gather_bytes(sc_, elements, unit_kind(unit));
  const Fsdp2CopyBytes copies = fsdp2_copy_bytes(sc_, elements);
  if (fsdp2_reduces_every_micro_batch(sc_)) {
    fsdp2_reduce(stage, mb, where, unit, copies.reduce_copy_in, chain);
    for (int d = 0; d < dp_sim_; ++d) {
      for (int r = 0; r < tp_sim_; ++r) {
        const std::size_t dev = index(stage, d, r);
        const OpId copy_in = chain[static_cast<std::size_t>(d * tp_sim_ + r)];
        // The copy-in consumed the unsharded gradients; the parameters reshard after backward.
        alloc(copy_in, mem_fsdp2_grads_, grads, false);
        alloc(copy_in, mem_fsdp2_params_, whole, false);
        fsdp2_held_[dev][unit] = sc_.parallel.fsdp2_shard();
      }
    }
    return;
  }
  // Pipelining: no gradient sync and no resharding after backward; the micro-batch's gradients
  // go into the unit's accumulated gradients, kept in the reduce dtype (FSDPParam
  // to_accumulated_grad_if_needed / accumulate_unsharded_grad_if_needed).
  auto& w = out_.workload;
  const double accumulated = fsdp2_reduce_bytes(sc_, elements);
  const sim::LabelId label = w.intern(where + "fsdp2 unsharded gradient accumulate");
  for (int d = 0; d < dp_sim_; ++d) {
    for (int r = 0; r < tp_sim_; ++r) {
      const std::size_t dev = index(stage, d, r);
      const std::size_t k = static_cast<std::size_t>(d * tp_sim_ + r);
      bool& started = fsdp2_accumulating_[dev][unit];
      const double bytes = started ? copies.unsharded_accumulate : copies.reduce_copy_in;
      const OpId add = w.add_compute(streams_[dev].compute, costs_.memory_bound(cost::Bytes{bytes}),
                                     label, cat_bwd_, mb);
      if (chain[k] != kNone) w.add_dependency(chain[k], add);
      chain[k] = add;
      if (!started) alloc(add, mem_fsdp2_grads_, accumulated, true);
      alloc(add, mem_fsdp2_grads_, grads, false);
      started = true;
    }
  }
}

void Builder::fsdp2_finish(int stage, const std::vector<int>& units, std::vector<OpId>& chain) {
  if (fsdp2_reduces_every_micro_batch(sc_)) return;
  // torch.distributed.pipelining: perform_reduce_grad -> finalize_backward after the stage's
  // last backward: every unit reduce-scattered (copy-in from the accumulated gradients, r to r),
  // then freed and resharded.
  for (int unit : units) {
    const double elements = fsdp2_unit_elements(unit);
    if (!(elements > 0)) continue;
    const double accumulated = fsdp2_reduce_bytes(sc_, elements);
    fsdp2_reduce(stage, m_ - 1,
                 unit == kFsdp2Embedding ? "embed "
                 : unit == kFsdp2Head    ? "head "
                                         : fmt::format("L{} ", unit),
                 unit, 2 * accumulated, chain);
    const double whole = fsdp2_gather_bytes(sc_, elements, unit_kind(unit));
    for (int d = 0; d < dp_sim_; ++d) {
      for (int r = 0; r < tp_sim_; ++r) {
        const std::size_t dev = index(stage, d, r);
        const OpId copy_in = chain[static_cast<std::size_t>(d * tp_sim_ + r)];
        alloc(copy_in, mem_fsdp2_grads_, accumulated, false);
        alloc(copy_in, mem_fsdp2_params_, whole, false);
        fsdp2_held_[dev][unit] = sc_.parallel.fsdp2_shard();
        fsdp2_accumulating_[dev][unit] = false;
      }
    }
  }
}

}  // namespace parasim::strat::detail
