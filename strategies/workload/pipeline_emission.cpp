// Workload builder: pipeline items per stage (queues, gates, cross-item dependencies) and the
// point-to-point transfers between stages.
#include <optional>

#include "strategies/data_parallel/zero3_gather_units.hpp"
#include "strategies/workload/workload_builder_impl.hpp"

namespace parasim::strat::detail {

void Builder::emit_stage(int stage) {
  const std::size_t ranks = static_cast<std::size_t>(dp_sim_ * tp_sim_);
  const StagePlan& plan = plans_by_stage_[static_cast<std::size_t>(stage)];
  // One fixed order: items follow each other on the compute chain. Several queues: each item
  // stands alone and the streams' priority rule orders them at run time.
  bool dynamic = false;
  for (const auto& item : plan.items) dynamic = dynamic || item.queue != 0;
  // Host ops of a dynamic schedule sit in their item's queue and wait for the item's inputs (a
  // host blocked on its receive), so the host issues the item the GPU would pick; syncs inside
  // such an item cost the host their time but do not split its host op (host_sync).
  host_syncs_wait_ = !dynamic;
  std::vector<OpId> chain(ranks, kNone);
  pending_.assign(ranks, kNone);
  // For gradient buckets (flush schedules): the last backward-type item of each chunk in each
  // iteration (iterations end at an optimizer item when several are simulated).
  std::vector<bool> final_pass(plan.items.size(), false);
  const ItemKind grad_kind = split_ ? ItemKind::kWeightGrad : ItemKind::kBackward;
  std::vector<bool> seen(static_cast<std::size_t>(chunks_), false);
  for (std::size_t i = plan.items.size(); i-- > 0;) {
    const PipelineItem& item = plan.items[i];
    if (item.kind == ItemKind::kOptimizer) seen.assign(seen.size(), false);
    if (item.kind != grad_kind || seen[static_cast<std::size_t>(item.chunk)]) continue;
    final_pass[i] = !async_;
    seen[static_cast<std::size_t>(item.chunk)] = true;
  }
  std::vector<std::vector<OpId>> gate(ranks);  // what the next iteration's first item waits for
  for (std::size_t i = 0; i < plan.items.size(); ++i) {
    const PipelineItem& item = plan.items[i];
    if (iterations_ && item.kind == ItemKind::kOptimizer) {
      end_iteration(stage, item.step, gate);
      continue;
    }
    if (dynamic) chain.assign(ranks, kNone);
    emit_item(stage, item, final_pass[i], chain);
    for (std::size_t k = 0; k < ranks && item.kind != ItemKind::kOptimizer; ++k) {
      const std::size_t dev =
          index(stage, static_cast<int>(k) / tp_sim_, static_cast<int>(k) % tp_sim_);
      const OpId first = item_ops(dev, item.kind, item.chunk, item.micro_batch).first;
      for (OpId op : gate[k]) out_.workload.add_dependency(op, first);
      gate[k].clear();
    }
  }
  host_syncs_wait_ = true;
  // Cross-item dependencies: a backward needs its forward, a weight gradient its backward, an
  // optimizer step the backward before it, a gated forward the release of an earlier one.
  for (int d = 0; d < dp_sim_; ++d) {
    for (int r = 0; r < tp_sim_; ++r) {
      const std::size_t dev = index(stage, d, r);
      int forwards = 0;
      OpId last_backward = kNone;
      auto& w = out_.workload;
      // A dynamic schedule's host op waits for what its item's first GPU op waits for.
      auto depend = [&](OpId before, const PassOps& item) {
        w.add_dependency(before, item.first);
        if (dynamic && item.host_first != kNone) w.add_dependency(before, item.host_first);
      };
      // DualPipe's overlapped pairs (a flush schedule's forward in queue 1): the forward starts
      // once the item before the pair is done, and the item after the pair's backward (and its
      // W) waits for it; between, the streams' priority interleaves the two.
      if (!async_) {
        const auto& items = plan.items;
        auto ops_of = [&](const PipelineItem& it) -> PassOps& {
          return item_ops(dev, it.kind, it.chunk, it.micro_batch);
        };
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (items[i].queue != 1 || items[i].kind != ItemKind::kForward) continue;
          const PassOps& f = ops_of(items[i]);
          if (i > 0 && items[i - 1].kind != ItemKind::kOptimizer) {
            depend(ops_of(items[i - 1]).last, f);
          }
          std::size_t end = i + 1;  // the pair's backward, and its W right after it
          if (end + 1 < items.size() && items[end + 1].kind == ItemKind::kWeightGrad &&
              items[end + 1].chunk == items[end].chunk &&
              items[end + 1].micro_batch == items[end].micro_batch) {
            ++end;
          }
          if (end + 1 < items.size() && items[end + 1].kind != ItemKind::kOptimizer) {
            depend(f.last, ops_of(items[end + 1]));
          }
        }
      }
      PassOps* previous = nullptr;  // the host op after an item's send: the next item's first
      // ZeRO-1 under an asynchronous schedule: the last step's gathered weights, which the next
      // backward and the forward the step's backward released wait for (emit_async_param_gather).
      OpId gathered = kNone;
      const int per_update = async_ ? backwards_per_update(out_.shape) : 1;
      for (const auto& item : plan.items) {
        if (item.kind != ItemKind::kOptimizer) {
          PassOps& ops = item_ops(dev, item.kind, item.chunk, item.micro_batch);
          if (previous != nullptr) previous->host_next = ops.host_first;
          previous = &ops;
        }
        switch (item.kind) {
          case ItemKind::kForward: {
            const auto& f = item_ops(dev, ItemKind::kForward, item.chunk, item.micro_batch);
            const int released = forwards++ - plan.gate_in_flight;
            if (plan.gate_in_flight > 0 && released >= 0) {
              depend(item_ops(dev, plan.gate_release, item.chunk, released).last, f);
            }
            // The forward a backward releases runs after the stage-local step that follows
            // that backward (the worker steps in line), after its ZeRO-1 gather if any: with
            // replicas the step waits for the reduction, and the forward with it, so no
            // micro-batch crosses more updates than the gate allows.
            if (async_ && released >= 0 && (released + 1) % per_update == 0) {
              const auto k = static_cast<std::size_t>((released + 1) / per_update - 1);
              if (k < optimizer_ops_[dev].size()) {
                const OpId gather = optimizer_gathers_[dev][k];
                depend(gather != kNone ? gather : optimizer_ops_[dev][k], f);
              }
            }
            break;
          }
          case ItemKind::kBackward: {
            const auto& b = item_ops(dev, ItemKind::kBackward, item.chunk, item.micro_batch);
            depend(item_ops(dev, ItemKind::kForward, item.chunk, item.micro_batch).last, b);
            if (gathered != kNone) depend(gathered, b);  // the step's weights, gathered
            gathered = kNone;
            last_backward = b.last;
            break;
          }
          case ItemKind::kWeightGrad:
            depend(item_ops(dev, ItemKind::kBackward, item.chunk, item.micro_batch).last,
                   item_ops(dev, ItemKind::kWeightGrad, item.chunk, item.micro_batch));
            break;
          case ItemKind::kOptimizer: {  // flush iterations: end_iteration orders it
            if (!iterations_) {
              const auto k = static_cast<std::size_t>(item.step - 1);
              depend(last_backward, PassOps{optimizer_ops_[dev][k], optimizer_ops_[dev][k],
                                            optimizer_host_ops_[dev][k], kNone});
              gathered = optimizer_gathers_[dev][k];
            }
            break;
          }
        }
      }
    }
  }
}

void Builder::end_iteration(int stage, int step, std::vector<std::vector<OpId>>& gate) {
  auto& w = out_.workload;
  const OpId begin = static_cast<OpId>(w.op_count());
  emit_data_parallel(stage);
  // Every op the step added on a device (gradient buckets, the optimizer's ops, ZeRO's param
  // all-gather) precedes that device's next iteration; its optimizer ops form the stage-local
  // optimizer item of this step.
  std::vector<PassOps> optimizer(gate.size());
  for (OpId op = begin; op < w.op_count(); ++op) {
    const SimulatedDevice& dev = out_.devices[w.device_of(op)];
    const auto k = static_cast<std::size_t>(dev.dp_rank * tp_sim_ + dev.tp_rank);
    gate[k].push_back(op);
    if (w.op(op).category != cat_opt_ || w.op(op).kind != sim::OpKind::kCompute) continue;
    if (optimizer[k].first == kNone) optimizer[k].first = op;
    optimizer[k].last = op;
  }
  for (std::size_t k = 0; k < gate.size(); ++k) {
    const std::size_t dev =
        index(stage, static_cast<int>(k) / tp_sim_, static_cast<int>(k) % tp_sim_);
    grad_ready_[dev].clear();
    if (optimizer[k].first == kNone) continue;
    out_.spans.push_back(PipelineSpan{static_cast<sim::DeviceId>(dev), optimizer[k].first,
                                      optimizer[k].last, ItemKind::kOptimizer, -1, 0, step});
  }
}

void Builder::emit_item(int stage, const PipelineItem& item, bool final_pass,
                        std::vector<OpId>& chain) {
  const std::size_t ranks = chain.size();
  const int mb = item.micro_batch;
  queue_ = item.queue;
  std::vector<OpId> first(ranks, kNone);
  auto for_each_rank = [&](auto&& fn) {
    for (int d = 0; d < dp_sim_; ++d) {
      for (int r = 0; r < tp_sim_; ++r) fn(static_cast<std::size_t>(d * tp_sim_ + r), d, r);
    }
  };
  for_each_rank(
      [&](std::size_t k, int d, int r) { host_item_start(index(stage, d, r), item, chain[k]); });
  auto record = [&]() {
    for_each_rank([&](std::size_t k, int d, int r) {
      const std::size_t dev = index(stage, d, r);
      if (first[k] == kNone) {
        // A pass with nothing to run (the W of a virtual stage without layers whose embedding
        // has no weight-gradient kernels): one empty op, so that what follows it can wait for it.
        auto& w = out_.workload;
        const OpId op = w.add_compute(streams_[dev].compute, sim::Time::zero(),
                                      w.intern("empty pass"), cat_bwd_, mb, queue_);
        if (chain[k] != kNone) w.add_dependency(chain[k], op);
        host_issue(dev, op, StepHost{}, sim::Time::zero(), false);
        first[k] = chain[k] = op;
      }
      host_item_end(dev, item, chain[k]);
      if (item.kind != ItemKind::kOptimizer) {
        item_ops(dev, item.kind, item.chunk, mb) = {first[k], chain[k], host_[dev].item_first,
                                                    kNone};
      }
      out_.spans.push_back(PipelineSpan{static_cast<sim::DeviceId>(dev), first[k], chain[k],
                                        item.kind, mb, item.chunk, item.step});
      if (item.kind != ItemKind::kForward && item.kind != ItemKind::kOptimizer) {
        final_backward_[dev] = chain[k];
      }
      if (item.kind == ItemKind::kBackward) emit_offload_accumulation(dev, stage, mb, chain[k]);
    });
  };
  if (item.kind == ItemKind::kOptimizer) {
    auto& w = out_.workload;
    // With data parallelism the stage's gradients are all-reduced first (async_reduction.cpp).
    const std::vector<std::vector<OpId>> reduced = emit_async_gradient_reduction(stage, item.step);
    for_each_rank([&](std::size_t k, int d, int r) {
      const std::size_t dev = index(stage, d, r);
      // A stage-local step (asynchronous schedules): the FP8 weights recast after each.
      const OpId op = w.add_compute(streams_[dev].compute,
                                    stage_optimizer_time(stage) + stage_fp8_weights(stage).time,
                                    w.intern("optimizer step"), cat_opt_, item.step, queue_);
      optimizer_ops_[dev].push_back(op);
      std::vector<OpId> waits{chain[k]};
      for (OpId before : reduced[k]) {
        w.add_dependency(before, op);
        waits.push_back(before);
      }
      host_optimizer(dev, stage, waits, {op});
      first[k] = op;
      chain[k] = op;
    });
    const std::vector<OpId> gathers = emit_async_param_gather(stage, item.step, chain);
    record();
    for_each_rank([&](std::size_t k, int d, int r) {
      const std::size_t dev = index(stage, d, r);
      optimizer_host_ops_[dev].push_back(host_[dev].item_first);
      optimizer_gathers_[dev].push_back(gathers[k]);
    });
    return;
  }
  const int vstage = sc_.virtual_stage(stage, item.chunk);
  const int last_vstage = pp_ * chunks_ - 1;
  const int lc = sc_.virtual_stage_layers(vstage);
  const int layer0 = sc_.first_layer_of_virtual_stage(vstage);  // index of its first layer
  // FSDP2 has its own units and reductions (fsdp2_emission.cpp); zero3 is DeepSpeed's / FSDP1's.
  const bool fsdp2 = sc_.parallel.fsdp2.enabled;
  const bool zero3 = sc_.parallel.zero_stage == 3 && !fsdp2;
  const bool zero3_prefetch = sc_.training.framework.zero3.prefetch;
  const bool paci_mem =
      sc_.parallel.schedule == PipelineSchedule::kPaci && sc_.parallel.paci_mode == PaciMode::kMem;
  // Per layer: its program (dense or MoE), what it keeps, its gradients' parameters.
  const ActivationBytes dense_act = activation_bytes(layer_);
  auto act_of = [&](int layer) { return activation_bytes(program_of(layer)); };
  const ActivationBytes& act = dense_act;  // the head's, the stage input's (any layer's)
  // A layer's gradients ready at `op`: the dense part reduced over dp x cp, the experts' over edp.
  auto gradients_ready = [&](std::size_t dev, OpId op, int layer) {
    const LayerParams params = layer_params_on_rank(sc_.model, sc_.parallel, layer);
    gradients_ready_at(dev, op, params.dense);
    if (params.expert > 0) expert_grad_ready_[dev].emplace_back(op, params.expert);
  };
  std::vector<OpId> prev_layer_first = chain;
  // Host costs of each list as issued here (host_plan.hpp); a fully recomputed layer's forward
  // runs under no_grad.
  const bool checkpointed = sc_.training.recompute == cost::Recompute::kFull;
  // Megatron's grouped full recompute (checkpoint_groups.hpp): per local layer what it keeps and
  // when its group reruns; block's other layers run plain_layer_. Dense layers only (its rules).
  const bool grouped = grouped_recompute(sc_.training);
  const std::vector<LayerCheckpoint> groups =
      grouped ? stage_checkpoints(sc_.training, lc) : std::vector<LayerCheckpoint>{};
  const CheckpointBytes group_bytes{layer_.activation_stored_bytes, layer_.activation_full_bytes,
                                    plain_layer_.activation_stored_bytes};
  auto grouped_program = [&](int l) -> const LayerProgram& {
    return groups[static_cast<std::size_t>(l)].checkpointed ? program_of(layer0 + l) : plain_layer_;
  };
  // The framework's gradient adds after a layer's backward (its W with a B/W split), on every
  // micro-batch but a step's first unless the framework adds there too.
  const bool accumulate = mb % m_ != 0 || fw_.counts.grad_accumulation_first_micro_batch;
  auto grad_accumulate = [&](const std::string& where, const LayerProgram& program) {
    if (!accumulate || program.grad_accumulation.empty()) return;
    std::vector<OpId> unused(ranks, kNone);
    emit_steps(stage, program.grad_accumulation, where, cat_bwd_, mb, chain, unused,
               host_plan(program.grad_accumulation, {false, true, false}));
  };

  if (item.kind == ItemKind::kForward) {
    // --overlap-param-gather: the step's first forward waits for each bucket's all-gather.
    std::vector<std::vector<OpId>> gathers;
    if (sc_.parallel.overlap_param_gather && mb % m_ == 0) gathers = emit_param_gathers(stage, mb);
    std::size_t gathered = 0;  // the next forward position (embedding, layers, head)
    auto wait_gathered = [&]() {
      if (gathered >= gathers.size()) return;
      for (std::size_t k = 0; k < ranks; ++k) {
        if (gathers[gathered][k] != kNone) pending_[k] = gathers[gathered][k];
      }
      ++gathered;
    };
    if (vstage == 0) {
      wait_gathered();
      if (fsdp2) fsdp2_unshard(stage, mb, "F embed ", kFsdp2Embedding, prev_layer_first, chain);
      emit_steps(stage, embed_.forward, "F embed ", cat_fwd_, mb, chain, first,
                 host_plan(embed_.forward, {}));
      if (fsdp2) fsdp2_after_forward(stage, kFsdp2Embedding, chain);
    }
    if (lc == 0) {  // Megatron's no-op layer (layer_program.hpp, noop_layer_steps)
      std::vector<OpId> noop_first(ranks, kNone);
      emit_steps(stage, noop_layer_, fmt::format("F V{} ", vstage), cat_fwd_, mb, chain, noop_first,
                 host_plan(noop_layer_, {}));
      for_each_rank([&](std::size_t k, int, int) {
        if (first[k] == kNone) first[k] = noop_first[k];
      });
    }
    for (int l = 0; l < lc; ++l) {
      const std::string where = fmt::format("F L{} ", layer0 + l);
      wait_gathered();
      if (zero3) zero3_gather(stage, mb, where, zero3_prefetch ? prev_layer_first : chain, chain);
      if (fsdp2) fsdp2_unshard(stage, mb, where, layer0 + l, prev_layer_first, chain);
      std::vector<OpId> layer_first(ranks, kNone);
      const LayerProgram& program = grouped ? grouped_program(l) : program_of(layer0 + l);
      const bool no_grad =
          grouped ? groups[static_cast<std::size_t>(l)].checkpointed : checkpointed;
      emit_steps(stage, program.forward, where, cat_fwd_, mb, chain, layer_first,
                 host_plan(program.forward, {true, false, no_grad}));
      if (fsdp2) fsdp2_after_forward(stage, layer0 + l, chain);
      for_each_rank([&](std::size_t k, int d, int r) {
        if (paci_mem) {
          if (l == 0) {
            alloc(layer_first[k], mem_act_, act.stage_input, true,
                  act_tag(mb, -1, ActPiece::kStageInput));
          }
        } else if (grouped) {
          const double kept =
              layer_activation(groups[static_cast<std::size_t>(l)], group_bytes).kept;
          if (kept > 0) {
            alloc(layer_first[k], mem_act_, kept, true, act_tag(mb, layer0 + l, ActPiece::kKept));
          }
        } else {
          alloc(layer_first[k], mem_act_, act_of(layer0 + l).stored, true,
                act_tag(mb, layer0 + l, ActPiece::kStored));
        }
        if (zero3) zero3_hold(index(stage, d, r), lc, l, false, layer_first[k], chain[k]);
        if (first[k] == kNone) first[k] = layer_first[k];
      });
      prev_layer_first = layer_first;
    }
    if (vstage == last_vstage) {
      std::vector<OpId> head_first(ranks, kNone);
      wait_gathered();
      if (fsdp2) fsdp2_unshard(stage, mb, "F head ", kFsdp2Head, prev_layer_first, chain);
      emit_steps(stage, head_.forward, "F ", cat_fwd_, mb, chain, head_first,
                 host_plan(head_.forward, {}));
      if (fsdp2) fsdp2_after_forward(stage, kFsdp2Head, chain);
      for_each_rank([&](std::size_t k, int, int) {
        if (split_) {  // two tensors, freed apart: the fp32 loss after B, the rest after W
          alloc(head_first[k], mem_act_, act.logits - act.loss_fp32, true,
                act_tag(mb, -1, ActPiece::kLogits));
          alloc(head_first[k], mem_act_, act.loss_fp32, true, act_tag(mb, -1, ActPiece::kLoss));
        } else {
          alloc(head_first[k], mem_act_, act.logits, true, act_tag(mb, -1, ActPiece::kLogits));
        }
        if (first[k] == kNone) first[k] = head_first[k];
      });
    }
    record();
    return;
  }

  if (item.kind == ItemKind::kWeightGrad) {
    // Zero-bubble W: the weight-gradient GEMMs; the activations they read are freed here.
    if (vstage == last_vstage) {
      emit_steps(stage, head_.weight_grad, "W ", cat_bwd_, mb, chain, first,
                 host_plan(head_.weight_grad, {false, true, false}));
      for_each_rank([&](std::size_t k, int d, int r) {
        // the rest freed after B
        alloc(chain[k], mem_act_, act.logits - act.loss_fp32, false,
              act_tag(mb, -1, ActPiece::kLogits));
        if (final_pass) head_gradients_ready(index(stage, d, r), chain[k]);
      });
    }
    for (int l = lc - 1; l >= 0; --l) {
      const std::string where = fmt::format("W L{} ", layer0 + l);
      const LayerProgram& program = program_of(layer0 + l);
      emit_steps(stage, program.weight_grad, where, cat_bwd_, mb, chain, first,
                 host_plan(program.weight_grad, {false, true, false}));
      grad_accumulate(where, program);
      for_each_rank([&](std::size_t k, int d, int r) {
        alloc(chain[k], mem_act_, act_of(layer0 + l).stored, false,
              act_tag(mb, layer0 + l, ActPiece::kStored));
        if (final_pass) gradients_ready(index(stage, d, r), chain[k], layer0 + l);
      });
    }
    if (vstage == 0) {
      emit_steps(stage, embed_.weight_grad, "W embed ", cat_bwd_, mb, chain, first,
                 host_plan(embed_.weight_grad, {false, true, false}));
      if (final_pass) {
        for_each_rank([&](std::size_t k, int d, int r) {
          gradients_ready_at(index(stage, d, r), chain[k],
                             input_embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp));
        });
      }
    }
    record();
    return;
  }

  // Backward (the input-gradient half only when weight gradients are split off).
  auto backward_of = [&](int layer) -> const std::vector<LayerStep>& {
    return split_ ? program_of(layer).backward_input : program_of(layer).backward;
  };
  const auto& head_bwd = split_ ? head_.backward_input : head_.backward;
  if (vstage == last_vstage) {
    std::vector<OpId> head_first(ranks, kNone);
    if (fsdp2) fsdp2_unshard(stage, mb, "B head ", kFsdp2Head, prev_layer_first, chain);
    emit_steps(stage, head_bwd, "B ", cat_bwd_, mb, chain, head_first,
               host_plan(head_bwd, {false, true, false}));
    for_each_rank([&](std::size_t k, int d, int r) {
      // With a B/W split, W still needs the logit gradients (bf16); the fp32 loss inputs go now.
      if (split_) {
        alloc(chain[k], mem_act_, act.loss_fp32, false, act_tag(mb, -1, ActPiece::kLoss));
      } else {
        alloc(chain[k], mem_act_, act.logits, false, act_tag(mb, -1, ActPiece::kLogits));
      }
      if (final_pass && !split_ && !fsdp2) head_gradients_ready(index(stage, d, r), chain[k]);
      if (first[k] == kNone) first[k] = head_first[k];
    });
    if (fsdp2) {
      fsdp2_before_backward(stage, kFsdp2Head, head_first);
      fsdp2_after_backward(stage, mb, "B head ", kFsdp2Head, chain);
      prev_layer_first = head_first;
    }
  }
  if (paci_mem) {
    // PACI mem mode: the stage's forward runs again (without its head) before the backward.
    for (int l = 0; l < lc; ++l) {
      std::vector<OpId> layer_first(ranks, kNone);
      const LayerProgram& program = program_of(layer0 + l);
      emit_steps(stage, program.forward, fmt::format("recompute L{} ", layer0 + l), cat_bwd_, mb,
                 chain, layer_first, host_plan(program.forward, {true, false, false}));
      for_each_rank([&](std::size_t k, int, int) {
        alloc(layer_first[k], mem_act_, act_of(layer0 + l).full, true,
              act_tag(mb, layer0 + l, ActPiece::kFull));
        if (first[k] == kNone) first[k] = layer_first[k];
      });
    }
  }
  // ZeRO-3: a layer's gradient reduce-scatter is queued on the dp stream after the next layer's
  // weight gather, so that the gather (prefetch) is not stuck behind it.
  std::string reduce_where;
  std::vector<OpId> reduce_after;
  for (int l = lc - 1; l >= 0; --l) {
    const std::string where = fmt::format("B L{} ", layer0 + l);
    if (zero3) {
      zero3_gather(stage, mb, where, zero3_prefetch ? prev_layer_first : chain, chain);
      // Released after every use (DeepSpeed 2021): the rerun of a checkpointed layer and its
      // backward each fetch the weights.
      if (zero3_backward_gathers(sc_.training.framework.zero3, checkpointed) == 2) {
        zero3_gather(stage, mb, where, chain, chain, false);
      }
      if (!reduce_after.empty()) zero3_reduce(stage, mb, reduce_where, reduce_after);
    }
    if (fsdp2) fsdp2_unshard(stage, mb, where, layer0 + l, prev_layer_first, chain);
    std::vector<OpId> layer_first(ranks, kNone);
    // Grouped recompute: a group's last layer first reruns the group's forward, and only its
    // backward pays the checkpoint's nested backward (one per group).
    const LayerCheckpoint group = grouped ? groups[static_cast<std::size_t>(l)] : LayerCheckpoint{};
    if (group.group_size > 0) {
      for (int j = l - group.group_size + 1; j <= l; ++j) {
        std::vector<OpId> rerun_first(ranks, kNone);
        const std::vector<LayerStep>& rerun = rerun_split(program_of(layer0 + j)).rerun;
        emit_steps(stage, rerun, fmt::format("B L{} ", layer0 + j), cat_bwd_, mb, chain,
                   rerun_first, host_plan(rerun, {true, true, false}));
        const double bytes =
            layer_activation(groups[static_cast<std::size_t>(j)], group_bytes).rerun;
        for_each_rank([&](std::size_t k, int, int) {
          if (bytes > 0) {
            alloc(rerun_first[k], mem_act_, bytes, true, act_tag(mb, layer0 + j, ActPiece::kRerun));
          }
          if (layer_first[k] == kNone) layer_first[k] = rerun_first[k];
        });
      }
    }
    const std::vector<LayerStep>& layer_bwd = !grouped ? backward_of(layer0 + l)
                                              : group.checkpointed
                                                  ? rerun_split(program_of(layer0 + l)).rest
                                                  : plain_layer_.backward;
    const ActivationBytes& layer_act = act_of(layer0 + l);
    emit_steps(stage, layer_bwd, where, cat_bwd_, mb, chain, layer_first,
               host_plan(layer_bwd, {true, true, grouped ? group.group_size > 0 : checkpointed}));
    if (!split_) grad_accumulate(where, program_of(layer0 + l));
    if (fsdp2) {
      fsdp2_before_backward(stage, layer0 + l, layer_first);
      fsdp2_after_backward(stage, mb, where, layer0 + l, chain);
    }
    for_each_rank([&](std::size_t k, int d, int r) {
      if (paci_mem) {
        alloc(chain[k], mem_act_, layer_act.full, false, act_tag(mb, layer0 + l, ActPiece::kFull));
      } else if (grouped) {  // the layer's rerun activations and what its forward kept
        const LayerActivation a = layer_activation(group, group_bytes);
        if (a.rerun > 0) {
          alloc(chain[k], mem_act_, a.rerun, false, act_tag(mb, layer0 + l, ActPiece::kRerun));
        }
        if (a.kept > 0) {
          alloc(chain[k], mem_act_, a.kept, false, act_tag(mb, layer0 + l, ActPiece::kKept));
        }
      } else {
        if (layer_act.transient > 0) {
          const std::uint64_t tag = act_tag(mb, layer0 + l, ActPiece::kTransient);
          alloc(layer_first[k], mem_act_, layer_act.transient, true, tag);
          alloc(chain[k], mem_act_, layer_act.transient, false, tag);
        }
        if (!split_) {
          alloc(chain[k], mem_act_, layer_act.stored, false,
                act_tag(mb, layer0 + l, ActPiece::kStored));
        }
      }
      if (zero3) zero3_hold(index(stage, d, r), lc, l, true, layer_first[k], chain[k]);
      if (first[k] == kNone) first[k] = layer_first[k];
      if (final_pass && !zero3 && !fsdp2 && !split_)
        gradients_ready(index(stage, d, r), chain[k], layer0 + l);
    });
    if (zero3) {
      reduce_where = where;
      reduce_after = chain;
    }
    prev_layer_first = layer_first;
  }
  if (!reduce_after.empty()) {
    zero3_reduce(stage, mb, reduce_where, reduce_after);
    zero3_end_backward(stage);
  }
  if (paci_mem) {
    for_each_rank([&](std::size_t k, int, int) {
      alloc(chain[k], mem_act_, act.stage_input, false, act_tag(mb, -1, ActPiece::kStageInput));
    });
  }
  if (vstage == 0 && split_) {
    // The embedding's input-gradient part is only its collective (SP all-gather), if any.
    emit_steps(stage, embed_.backward_input, "B embed ", cat_bwd_, mb, chain, first,
               host_plan(embed_.backward_input, {false, true, false}));
  }
  if (vstage == 0 && !split_) {
    std::vector<OpId> embed_first(ranks, kNone);
    if (fsdp2) fsdp2_unshard(stage, mb, "B embed ", kFsdp2Embedding, prev_layer_first, chain);
    emit_steps(stage, embed_.backward, "B embed ", cat_bwd_, mb, chain, embed_first,
               host_plan(embed_.backward, {false, true, false}));
    for_each_rank([&](std::size_t k, int, int) {
      if (first[k] == kNone) first[k] = embed_first[k];
    });
    if (fsdp2) {
      fsdp2_before_backward(stage, kFsdp2Embedding, embed_first);
      fsdp2_after_backward(stage, mb, "B embed ", kFsdp2Embedding, chain);
    }
    if (final_pass && !fsdp2) {
      for_each_rank([&](std::size_t k, int d, int r) {
        gradients_ready_at(index(stage, d, r), chain[k],
                           input_embedding_params_per_tp_rank(sc_.model, sc_.parallel.tp));
      });
    }
  }
  if (fsdp2 && final_pass) {  // pipelining: the chunk's accumulated gradients reduced now
    std::vector<int> units;
    if (vstage == last_vstage) units.push_back(kFsdp2Head);
    for (int l = lc - 1; l >= 0; --l) units.push_back(layer0 + l);
    if (vstage == 0) units.push_back(kFsdp2Embedding);
    fsdp2_finish(stage, units, chain);
  }
  record();
}

void Builder::emit_p2p() {
  auto& w = out_.workload;
  const double bytes = static_cast<double>(sc_.training.micro_batch) * sc_.model.seq_len /
                       sc_.parallel.cp * sc_.model.hidden *
                       cost::bytes_per_element(sc_.training.precision) /
                       sc_.parallel.tp;  // Megatron's scatter-gather: each TP rank sends 1/t
  // A transfer between two GPUs is a send/recv of a 2-rank group, intra- or inter-node; the cost
  // model gives its latency and achieved share of the link (calibrated when measured). Planned
  // on first use, so that a link class no transfer uses is never asked about.
  std::optional<cost::CollectivePlan> plans[2];  // intra, inter
  auto p2p_phase = [&](bool inter) -> const cost::CollectivePhase& {
    auto& plan = plans[inter ? 1 : 0];
    if (!plan) {
      plan =
          costs_.collective(cost::CollectiveKind::kSendRecv, cost::Bytes{bytes},
                            inter ? cost::GroupPlacement{2, 1, 2} : cost::GroupPlacement{2, 2, 1});
    }
    return plan->phases.front();
  };
  const int virtual_stages = pp_ * chunks_;
  for (int vs = 0; vs + 1 < virtual_stages; ++vs) {
    const int s = sc_.stage_of_virtual_stage(vs), chunk = sc_.chunk_of_virtual_stage(vs);
    const int s_next = sc_.stage_of_virtual_stage(vs + 1);
    const int chunk_next = sc_.chunk_of_virtual_stage(vs + 1);
    for (int d = 0; d < dp_sim_; ++d) {
      for (int r = 0; r < tp_sim_; ++r) {
        const std::size_t a = index(s, d, r), b = index(s_next, d, r);
        if (s == s_next) {  // the V's turn: the next chunk on the same GPU reads the output
          for (const auto& item : plans_by_stage_[static_cast<std::size_t>(s)].items) {
            if (item.chunk != chunk && item.chunk != chunk_next) continue;
            if (item.kind == ItemKind::kForward && item.chunk == chunk) {
              w.add_dependency(item_ops(a, ItemKind::kForward, chunk, item.micro_batch).last,
                               item_ops(a, ItemKind::kForward, chunk_next, item.micro_batch).first);
            } else if (item.kind == ItemKind::kBackward && item.chunk == chunk_next) {
              w.add_dependency(item_ops(a, ItemKind::kBackward, chunk_next, item.micro_batch).last,
                               item_ops(a, ItemKind::kBackward, chunk, item.micro_batch).first);
            }
          }
          continue;
        }
        const bool inter = layout_.pipeline_link(s, s_next, d, r) == cost::LinkClass::kInterNode;
        const cost::CollectivePhase& phase = p2p_phase(inter);
        auto transfer = [&](std::size_t from, std::size_t to, sim::StreamId send,
                            sim::StreamId recv, const char* label, int mb) {
          const std::array<sim::StreamId, 2> members{send, recv};
          const std::array<sim::PhaseSpec, 1> phases{sim::PhaseSpec{phase.latency, 0, 1}};
          const std::array<sim::FlowSpec, 1> flows{phase_flow(from, to, phase, true)};
          const sim::GroupId g =
              w.add_group(members, phases, flows, w.intern(label), cat_pp_, mb, true, bytes);
          out_.groups.push_back(
              GroupInfo{CommKind::kPipeline, cost::CollectiveKind::kSendRecv, bytes, 2});
          return g;
        };
        // The host side (FrameworkSpec::pipeline_transfers): a host-synchronized framework's
        // host waits in the receiving item's first host op for its receive, and in the sending
        // item's next one for its send; a dynamic schedule's host waits for its receive.
        const bool synchronized = fw_.pipeline_transfers == PipelineTransfers::kHostSynchronized;
        // (A dynamic schedule's next item in plan order is not the next one run: no send wait.)
        auto host_waits = [&](sim::GroupId g, const PassOps& sender, const PassOps& receiver,
                              bool dynamic_sender, bool dynamic_receiver) {
          if ((synchronized || dynamic_receiver) && receiver.host_first != kNone) {
            w.add_dependency(w.members(g)[1], receiver.host_first);
          }
          if (synchronized && !dynamic_sender && sender.host_next != kNone) {
            w.add_dependency(w.members(g)[0], sender.host_next);
          }
        };
        auto dynamic = [&](int stage) {
          for (const auto& item : plans_by_stage_[static_cast<std::size_t>(stage)].items) {
            if (item.queue != 0) return true;
          }
          return false;
        };
        const bool dynamic_a = dynamic(s), dynamic_b = dynamic(s_next);
        // Activations forward and gradients backward, each in the order the sender runs them
        // (the receiver consumes them in the same order on every schedule here).
        for (const auto& item : plans_by_stage_[static_cast<std::size_t>(s)].items) {
          if (item.kind != ItemKind::kForward || item.chunk != chunk) continue;
          const auto g = transfer(a, b, streams_[a].send_fwd[static_cast<std::size_t>(chunk)],
                                  streams_[b].recv_fwd[static_cast<std::size_t>(chunk_next)],
                                  "send activations", item.micro_batch);
          const PassOps& sender = item_ops(a, ItemKind::kForward, chunk, item.micro_batch);
          const PassOps& receiver = item_ops(b, ItemKind::kForward, chunk_next, item.micro_batch);
          w.add_dependency(sender.last, w.members(g)[0]);
          w.add_dependency(w.members(g)[1], receiver.first);
          host_waits(g, sender, receiver, dynamic_a, dynamic_b);
        }
        for (const auto& item : plans_by_stage_[static_cast<std::size_t>(s_next)].items) {
          if (item.kind != ItemKind::kBackward || item.chunk != chunk_next) continue;
          const auto g = transfer(b, a, streams_[b].send_bwd[static_cast<std::size_t>(chunk_next)],
                                  streams_[a].recv_bwd[static_cast<std::size_t>(chunk)],
                                  "send gradients", item.micro_batch);
          const PassOps& sender = item_ops(b, ItemKind::kBackward, chunk_next, item.micro_batch);
          const PassOps& receiver = item_ops(a, ItemKind::kBackward, chunk, item.micro_batch);
          w.add_dependency(sender.last, w.members(g)[0]);
          w.add_dependency(w.members(g)[1], receiver.first);
          host_waits(g, sender, receiver, dynamic_b, dynamic_a);
        }
      }
    }
  }
}

}  // namespace parasim::strat::detail
