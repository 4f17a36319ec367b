#include "planner/screen.hpp"

#include <algorithm>
#include <cmath>

#include "costmodel/model_state_memory.hpp"
#include "costmodel/non_tensor_memory.hpp"
#include "planner/rules.hpp"
#include "strategies/data_parallel/fsdp2_units.hpp"
#include "strategies/data_parallel/megatron_buckets.hpp"
#include "strategies/data_parallel/zero3_gather_units.hpp"
#include "strategies/optimizers/optimizer_adamw.hpp"
#include "strategies/optimizers/optimizer_shampoo.hpp"
#include "strategies/registry/registry.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"
#include "strategies/workload/communicators.hpp"
#include "strategies/workload/rank_layout.hpp"

namespace parasim::plan {
namespace {

using strat::PipelineSchedule;

double seconds(sim::Time t) {
  return t.to_seconds();
}

ScreenKey programs_key(const Candidate& c) {
  return ScreenKey{{c.gpus, c.tp, c.sequence_parallel + 2 * static_cast<int>(c.tp_overlap),
                    c.cp | (static_cast<std::int64_t>(c.cp_comm) << 16) |
                        (static_cast<std::int64_t>(c.cp_a2a_size) << 24),
                    c.micro_batch, static_cast<int>(c.recompute),
                    static_cast<int>(c.attention) | (static_cast<std::int64_t>(c.compile) << 8),
                    static_cast<int>(c.placement) | (static_cast<std::int64_t>(c.ep) << 8) |
                        (static_cast<std::int64_t>(c.dispatcher) << 28) |
                        (static_cast<std::int64_t>(c.etp) << 32) |
                        (static_cast<std::int64_t>(c.recipe) << 48)}};
}

}  // namespace

ScreenGroups Screen::groups_of(const Candidate& c) const {
  const strat::RankLayout layout(screen_replica_spec(c), node_size(base_, c));
  const int etp = expert_tp(c);
  ScreenGroups g;
  g.tp = layout.tp_group(0, 0);
  g.cp = layout.replica_block_group(0, 0, c.cp);
  strat::ParallelSpec cp_spec;
  cp_spec.cp = c.cp;
  cp_spec.cp_comm = c.cp_comm;
  cp_spec.cp_a2a_size = c.cp_a2a_size;
  const strat::CpGroupShape a2a =
      strat::cp_group_shape(cp_spec, strat::StepGroup::kContextAllToAll);
  const strat::CpGroupShape ring = strat::cp_group_shape(cp_spec, strat::StepGroup::kContextRing);
  g.cp_a2a = layout.replica_strided_group(0, 0, a2a.size, a2a.stride);
  g.cp_ring = layout.replica_strided_group(0, 0, ring.size, ring.stride);
  if (base_.model.moe.enabled()) {
    g.ep = layout.expert_parallel_group(0, 0, 0, etp, c.ep);
    g.etp = layout.expert_tensor_group(0, 0, 0, etp);
    g.grid = layout.expert_grid_group(0, 0, 0, etp, c.ep);
  }
  return g;
}

double Screen::steps_time(const std::vector<strat::LayerStep>& steps, const cost::CostModel& costs,
                          const ScreenGroups& groups, double* comm) {
  // The engine without contention: each step on its stream (compute, or its group's), after
  // the previous step or the steps it names.
  std::vector<double> finish(steps.size(), 0.0);
  double free[8] = {0, 0, 0, 0, 0, 0, 0, 0};  // compute, then one per StepGroup
  double end = 0, compute = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const strat::LayerStep& st = steps[i];
    double start = 0;
    if (st.after.empty() || i == 0) {
      start = i > 0 ? finish[i - 1] : 0.0;
    } else {
      for (int j : st.after) start = std::max(start, finish[static_cast<std::size_t>(j)]);
    }
    double duration = 0;
    int resource = 0;
    if (!st.is_collective) {
      duration = seconds(st.compute.time);
      compute += duration;
    } else {
      resource = 1 + static_cast<int>(st.group);
      const cost::GroupPlacement& g = groups.of(st.group);
      duration =
          seconds(cost::estimate_time(strat::plan_step(costs, st.collective, g), costs.cluster()));
    }
    start = std::max(start, free[resource]);
    finish[i] = start + duration;
    free[resource] = finish[i];
    end = std::max(end, finish[i]);
  }
  if (comm != nullptr) *comm = end - compute;  // communication the compute stream waits for
  return end;
}

HostGpu Screen::steps_map(const std::vector<strat::LayerStep>& steps, strat::HostContext context,
                          const cost::CostModel& costs, const ScreenGroups& groups) {
  const strat::FrameworkSpec& fw = compiled_ ? compiled_framework_ : eager_framework_;
  const std::vector<strat::StepHost> host =
      strat::step_host_costs(steps, context, fw, costs.device().kernel_launch_overhead);
  const double sync = seconds(fw.host.sync);
  bool chain = true;  // every step after the previous one (no ring-attention DAG)
  for (std::size_t i = 1; i < steps.size(); ++i) chain = chain && steps[i].after.empty();
  HostGpu m;
  if (!chain) {
    // A small DAG on several streams: its uncontended time as one GPU op, issued as its steps
    // are (first kernel after the first step's share, last after all of them).
    double total = 0;
    int syncs = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      total += seconds(host[i].total);
      syncs += steps[i].syncs_after;
    }
    const double first = steps.empty() ? 0.0 : seconds(host[0].first);
    m = HostGpu::gpu_op(steps_time(steps, costs, groups, nullptr), first, total, 0.0)
            .then(HostGpu::syncs(syncs, sync));
    return m;
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const strat::LayerStep& st = steps[i];
    if (st.is_collective) {
      const cost::GroupPlacement& g = groups.of(st.group);
      const double d =
          seconds(cost::estimate_time(strat::plan_step(costs, st.collective, g), costs.cluster()));
      const double t = seconds(host[i].total);
      m = m.then(HostGpu::gpu_op(d, t, t, 0.0));  // a group member: issued at its call's end
    } else {
      m = m.then(HostGpu::gpu_op(seconds(st.compute.time), seconds(host[i].first),
                                 seconds(host[i].total), seconds(st.compute.last_body)));
    }
    m = m.then(HostGpu::syncs(st.syncs_after, sync));
  }
  return m;
}

Screen::Pass Screen::time_program(const strat::LayerProgram& p, const cost::CostModel& costs,
                                  const ScreenGroups& groups, bool layer, bool checkpointed) {
  Pass out;
  out.forward = steps_time(p.forward, costs, groups, &out.forward_comm);
  out.backward = steps_time(p.backward, costs, groups, &out.backward_comm);
  out.backward_input = p.backward_input.empty()
                           ? out.backward
                           : steps_time(p.backward_input, costs, groups, nullptr);
  out.weight_grad = p.weight_grad.empty() ? 0.0 : steps_time(p.weight_grad, costs, groups, nullptr);
  // The host contexts the builder issues each list with (pipeline_emission.cpp, emit_item).
  out.forward_map = steps_map(p.forward, {layer, false, layer && checkpointed}, costs, groups);
  out.backward_map = steps_map(p.backward, {layer, true, layer && checkpointed}, costs, groups);
  out.backward_input_map =
      p.backward_input.empty()
          ? out.backward_map
          : steps_map(p.backward_input, {layer, true, layer && checkpointed}, costs, groups);
  out.weight_grad_map = steps_map(p.weight_grad, {false, true, false}, costs, groups);
  return out;
}

const Screen::Programs& Screen::programs(const Candidate& c) {
  const ScreenKey key = programs_key(c);
  auto it = programs_.find(key);
  if (it != programs_.end()) return it->second;
  const strat::Scenario sc = apply_candidate(base_, c);
  const cost::CostModel& costs = costs_.at(c.gpus);
  const ScreenGroups groups = groups_of(c);
  compiled_ = c.compile;  // the layer's host costs (steps_map) as the candidate's framework's
  const strat::LayerProgram layer = strat::transformer_layer_program(sc, costs);
  const strat::LayerProgram embed = strat::embedding_program(sc, costs);
  const strat::LayerProgram head = strat::head_program(sc, costs);
  Programs p;
  const bool checkpointed = c.recompute == cost::Recompute::kFull;
  p.layer = time_program(layer, costs, groups, true, checkpointed);
  if (base_.model.moe.enabled()) {
    const strat::LayerProgram moe =
        strat::transformer_layer_program(sc, costs, strat::LayerKind::kMoe);
    p.moe = time_program(moe, costs, groups, true, checkpointed);
    p.moe_stored = moe.activation_stored_bytes;
    p.moe_full = moe.activation_full_bytes;
    p.moe_flops = moe.model_flops.value;
  }
  p.embed = time_program(embed, costs, groups, false, false);
  p.head = time_program(head, costs, groups, false, false);
  p.grad_accumulation_empty = layer.grad_accumulation.empty();
  p.grad_accumulation = steps_map(layer.grad_accumulation, {false, true, false}, costs, groups);
  p.stored = layer.activation_stored_bytes;
  p.full = layer.activation_full_bytes;
  p.model_flops = layer.model_flops.value;
  p.embed_flops = embed.model_flops.value;
  p.head_flops = head.model_flops.value;
  p.head_stored = head.activation_stored_bytes;
  if (checkpointed && strat::grouped_recompute(base_.training)) {
    const strat::LayerProgram plain =
        strat::transformer_layer_program(strat::without_recompute(sc), costs);
    p.plain = time_program(plain, costs, groups, true, false);
    p.plain_stored = plain.activation_stored_bytes;
    const strat::RerunSplit split = strat::split_rerun(layer.backward);
    p.rerun_map = steps_map(split.rerun, {true, true, false}, costs, groups);
    p.rest_map = steps_map(split.rest, {true, true, false}, costs, groups);
    p.rest_last_map = steps_map(split.rest, {true, true, true}, costs, groups);
  }
  return programs_.emplace(key, p).first->second;
}

double Screen::p2p_time(const Candidate& c) {
  if (c.pp == 1) return 0;
  const strat::RankLayout layout(screen_replica_spec(c), node_size(base_, c));
  const bool inter = layout.pipeline_link(0, 1, 0, 0) == cost::LinkClass::kInterNode;
  const ScreenKey key{{c.gpus, c.tp, c.cp, c.micro_batch, inter}};
  auto it = p2p_.find(key);
  if (it != p2p_.end()) return it->second;
  // The builder's transfer (pipeline_emission.cpp): each TP rank sends 1/t of the activations.
  const double bytes = static_cast<double>(c.micro_batch) * base_.model.seq_len / c.cp *
                       base_.model.hidden * cost::bytes_per_element(base_.training.precision) /
                       c.tp;
  const cost::CostModel& costs = costs_.at(c.gpus);
  const double t = seconds(cost::estimate_time(
      costs.collective(cost::CollectiveKind::kSendRecv, cost::Bytes{bytes},
                       inter ? cost::GroupPlacement{2, 1, 2} : cost::GroupPlacement{2, 2, 1}),
      costs.cluster()));
  return p2p_.emplace(key, t).first->second;
}

const std::vector<int>& Screen::stage_split(const Candidate& c) {
  const ScreenKey key{
      {c.pp, c.chunks, c.first_stage_layers, c.last_stage_layers, c.own_stage_layers ? 1 : 0}};
  auto it = splits_.find(key);
  if (it != splits_.end()) return it->second;
  bool valid = true;
  std::vector<int> split = c.own_stage_layers ? base_.parallel.stage_layers
                                              : uneven_stage_layers(base_.model.layers, c, &valid);
  return splits_.emplace(key, std::move(split)).first->second;
}

int Screen::stage_layers(const Candidate& c, int stage) {
  const std::vector<int>& split = stage_split(c);
  if (split.empty()) return base_.model.layers / c.pp;
  if (!c.own_stage_layers || c.chunks == 1) return split[static_cast<std::size_t>(stage)];
  int n = 0;  // the base's own split over virtual stages: this stage's chunks together
  for (int k = 0; k < c.chunks; ++k) {
    n += split[static_cast<std::size_t>(strat::virtual_stage_of(c.schedule, c.pp, stage, k))];
  }
  return n;
}

std::vector<std::pair<int, int>> Screen::stage_ranges(const Candidate& c, int stage) {
  // Virtual stage vs = chunk x pp + stage (or the V); the layers run in virtual-stage order.
  const std::vector<int>& split = stage_split(c);
  const int virtual_stages = c.pp * c.chunks;
  auto count = [&](int vs) {
    if (split.empty()) return base_.model.layers / virtual_stages;
    if (static_cast<int>(split.size()) == virtual_stages)
      return split[static_cast<std::size_t>(vs)];
    return split[static_cast<std::size_t>(vs % c.pp)];  // uneven stages run one chunk
  };
  std::vector<std::pair<int, int>> out;
  int first = 0;
  for (int vs = 0; vs < virtual_stages; ++vs) {
    if (strat::stage_of_virtual_stage(c.schedule, c.pp, vs) == stage) {
      out.emplace_back(first, count(vs));
    }
    first += count(vs);
  }
  return out;
}

int Screen::stage_moe_layers(const Candidate& c, int stage) {
  if (!base_.model.moe.enabled()) return 0;
  int n = 0;
  for (const auto& [first, count] : stage_ranges(c, stage)) {
    n += base_.model.moe.moe_layers_in(first, count);
  }
  return n;
}

namespace {

HostGpu actions_map(const strat::HostActions& actions, double sync) {
  HostGpu m;
  for (const strat::HostAction& a : actions) {
    m = m.then(HostGpu::host_work(a.work.to_seconds())).then(HostGpu::syncs(a.syncs, sync));
  }
  return m;
}

}  // namespace

Screen::StagePasses Screen::stage_passes(const Candidate& c, const Programs& pr, int stage,
                                         int micro_batches, double zero3_forward,
                                         double zero3_backward) {
  const int P = c.pp, v = c.chunks;
  const int kind = stage == 0 ? 0 : stage == P - 1 ? 2 : 1;  // first, middle, last (V: turn)
  const bool split = strat::splits_weight_gradient(c.schedule);
  const int layers = stage_layers(c, stage) / v;  // per virtual stage
  ScreenKey key = programs_key(c);
  key.v[8] = (static_cast<std::int64_t>(P) * 64 + v) * 8192 + layers;
  const int moe_layers = stage_moe_layers(c, stage) / v;  // per virtual stage, as the layers
  key.v[9] = kind * 2 + (split ? 1 : 0) + 8 * static_cast<std::int64_t>(moe_layers) +
             (strat::places_chunks_in_v(c.schedule) ? std::int64_t{1} << 40 : 0);
  key.v[10] = micro_batches;
  key.v[11] = c.zero_stage == 3 ? static_cast<std::int64_t>(c.dp) * c.cp * 2 + c.fsdp2 : 0;
  auto it = passes_.find(key);
  if (it != passes_.end()) return it->second;
  const strat::FrameworkSpec& fw = base_.training.framework;
  const double sync = seconds(fw.host.sync);
  const sim::Time launch = costs_.at(c.gpus).device().kernel_launch_overhead;
  const int last = P * v - 1;
  // ZeRO-3: the layer's weights arrive on the dp stream; what the gather takes beyond the
  // layer's compute delays it (screen.hpp).
  const HostGpu z3f = HostGpu::gpu_op(zero3_forward, 0, 0, 0);
  const HostGpu z3b = HostGpu::gpu_op(zero3_backward, 0, 0, 0);
  // Dense layers and MoE layers (the model's first dense layers run first).
  const int dense_layers = layers - moe_layers;
  auto both = [&](const HostGpu& dense, const HostGpu& moe) {
    return moe_layers > 0 ? dense.power(dense_layers).then(moe.power(moe_layers))
                          : dense.power(layers);
  };
  const HostGpu layer_f = both(pr.layer.forward_map.then(z3f), pr.moe.forward_map.then(z3f));
  const HostGpu& layer_b_map = split ? pr.layer.backward_input_map : pr.layer.backward_map;
  const HostGpu& moe_b_map = split ? pr.moe.backward_input_map : pr.moe.backward_map;
  const HostGpu layer_b = both(layer_b_map.then(z3b), moe_b_map.then(z3b));
  const HostGpu layer_b_acc = both(layer_b_map.then(pr.grad_accumulation).then(z3b),
                                   moe_b_map.then(pr.grad_accumulation).then(z3b));
  // Grouped full recompute (Megatron's groups, torchtitan's every-nth: dense layers, no B/W split,
  // ZeRO-3 and FSDP2 with every-nth's one-layer checkpoints only: its rules): each
  // layer's forward, and per group its rerun before the last layer's backward, as the builder.
  HostGpu grouped_f, grouped_b, grouped_b_acc;
  const bool grouped =
      c.recompute == cost::Recompute::kFull && strat::grouped_recompute(base_.training);
  if (grouped) {
    const auto ck = strat::stage_checkpoints(base_.training, layers);
    for (const strat::LayerCheckpoint& l : ck) {
      grouped_f = grouped_f.then(l.checkpointed ? pr.layer.forward_map : pr.plain.forward_map);
      if (c.zero_stage == 3) grouped_f = grouped_f.then(z3f);  // sharded (every-nth): as layer_f
    }
    for (auto l = ck.rbegin(); l != ck.rend(); ++l) {
      HostGpu one = pr.rerun_map.power(l->group_size);
      one = one.then(!l->checkpointed    ? pr.plain.backward_map
                     : l->group_size > 0 ? pr.rest_last_map
                                         : pr.rest_map);
      grouped_b = grouped_b.then(one.then(z3b));
      grouped_b_acc = grouped_b_acc.then(one.then(pr.grad_accumulation).then(z3b));
    }
  }
  const HostGpu layer_w = both(pr.layer.weight_grad_map, pr.moe.weight_grad_map);
  const HostGpu layer_w_acc = both(pr.layer.weight_grad_map.then(pr.grad_accumulation),
                                   pr.moe.weight_grad_map.then(pr.grad_accumulation));
  const HostGpu& head_b = split ? pr.head.backward_input_map : pr.head.backward_map;
  const HostGpu& embed_b = split ? pr.embed.backward_input_map : pr.embed.backward_map;
  using strat::HostItem;
  // One micro-batch's items on this stage, every chunk (pipeline_emission.cpp, emit_item).
  // Transfers only between GPUs (the V's turn has none), as the builder's host_emission.cpp.
  auto from_before = [&](int vs) {
    return vs > 0 && strat::hop_crosses_gpus(c.schedule, P, vs - 1);
  };
  auto to_after = [&](int vs) { return vs < last && strat::hop_crosses_gpus(c.schedule, P, vs); };
  const bool last_with_first = strat::head_stage_of(c.schedule, P) == 0;
  auto forward = [&](int chunk) {
    const int vs = strat::virtual_stage_of(c.schedule, P, stage, chunk);
    HostGpu m = actions_map(
        strat::item_start_host(fw, HostItem::kForward, from_before(vs),
                               strat::loads_batch(fw, vs, last, last_with_first), launch),
        sync);
    if (vs == 0) m = m.then(pr.embed.forward_map);
    m = m.then(grouped ? grouped_f : layer_f);
    if (vs == last) m = m.then(pr.head.forward_map);
    return m.then(actions_map(strat::item_end_host(fw, HostItem::kForward, to_after(vs)), sync));
  };
  auto backward = [&](int chunk, bool accumulate) {
    const int vs = strat::virtual_stage_of(c.schedule, P, stage, chunk);
    HostGpu m = actions_map(
        strat::item_start_host(fw, HostItem::kBackward, to_after(vs), false, launch), sync);
    if (vs == last) m = m.then(head_b);
    if (grouped)
      m = m.then(accumulate ? grouped_b_acc : grouped_b);
    else
      m = m.then(accumulate && !split ? layer_b_acc : layer_b);
    if (vs == 0) m = m.then(embed_b);
    return m.then(
        actions_map(strat::item_end_host(fw, HostItem::kBackward, from_before(vs)), sync));
  };
  auto weight_grad = [&](int chunk, bool accumulate) {
    const int vs = strat::virtual_stage_of(c.schedule, P, stage, chunk);
    HostGpu m =
        actions_map(strat::item_start_host(fw, HostItem::kWeightGrad, false, false, launch), sync);
    if (vs == last) m = m.then(pr.head.weight_grad_map);
    m = m.then(accumulate ? layer_w_acc : layer_w);
    if (vs == 0) m = m.then(pr.embed.weight_grad_map);
    return m.then(actions_map(strat::item_end_host(fw, HostItem::kWeightGrad, false), sync));
  };
  // The builder's gradient adds: every micro-batch but a step's first, unless the framework
  // adds there too (pipeline_emission.cpp); with pp > 1 the screen adds them to every backward.
  const bool adds = !pr.grad_accumulation_empty;
  const bool first_adds = adds && fw.counts.grad_accumulation_first_micro_batch;
  StagePasses out;
  HostGpu first_mb, later_mb;
  for (int ch = 0; ch < v; ++ch) {
    const HostGpu f = forward(ch);
    const HostGpu b = backward(ch, adds && (micro_batches > 1 || first_adds));
    const HostGpu w =
        split ? weight_grad(ch, adds && (micro_batches > 1 || first_adds)) : HostGpu();
    out.f += f.time();
    out.b += b.time();
    out.w += split ? w.time() : 0.0;
    first_mb = first_mb.then(f).then(backward(ch, first_adds));
    later_mb = later_mb.then(f).then(b);
    if (split) {
      first_mb = first_mb.then(weight_grad(ch, first_adds));
      later_mb = later_mb.then(w);
    }
  }
  out.sequence = first_mb.then(later_mb.power(micro_batches - 1)).time();
  return passes_.emplace(key, out).first->second;
}

Estimate Screen::estimate(const Candidate& c) {
  const Programs& pr = programs(c);
  const int P = c.pp;
  const int m = base_.training.global_batch / (c.micro_batch * c.dp);
  const int v = c.chunks;
  const bool split = strat::splits_weight_gradient(c.schedule);
  const bool async = strat::is_asynchronous(c.schedule);
  const bool post_validation = candidate_post_validation(base_, c);
  const double lb = split ? pr.layer.backward_input : pr.layer.backward;
  const double lw = split ? pr.layer.weight_grad : 0.0;
  double z3f = 0, z3b = 0;
  if (c.fsdp2) {  // the copies on the compute stream; the collectives' excess exposed
    const Fsdp2Times& t = fsdp2_times(c);
    z3f = t.compute_forward + std::max(0.0, t.gather_forward - pr.layer.forward);
    z3b = t.compute_backward + std::max(0.0, t.gather_backward + t.reduce - pr.layer.backward);
  } else if (c.zero_stage == 3) {
    const auto [gather, reduce] = zero3_times(c);
    const strat::Zero3Gathering& z3 = base_.training.framework.zero3;
    if (z3.prefetch) {  // hidden behind the previous layer's compute, the excess exposed
      z3f = std::max(0.0, gather - pr.layer.forward);
      z3b = std::max(0.0, gather + reduce - pr.layer.backward);
    } else {  // each gather waited for before its layer (DeepSpeed 2021), reductions behind
      const int backward_gathers =
          strat::zero3_backward_gathers(z3, c.recompute == cost::Recompute::kFull);
      z3f = gather;
      z3b = backward_gathers * gather + std::max(0.0, reduce - pr.layer.backward);
    }
  }
  const double eb = split ? pr.embed.backward_input : pr.embed.backward;
  const double hb = split ? pr.head.backward_input : pr.head.backward;
  const double ew = split ? pr.embed.weight_grad : 0.0;
  const double hw = split ? pr.head.weight_grad : 0.0;
  // Stage kinds: first (embedding), middle, last (head); one stage has both.
  struct StageTimes {
    int stage;
    double f, b, w;
  };
  std::vector<StageTimes> stages;
  double sequence = 0;
  std::vector<int> kinds{0};  // first; a middle one (stands for P - 2); last
  if (P > 2) kinds.push_back(1);
  if (P > 1) kinds.push_back(P - 1);
  for (int s : kinds) {
    const StagePasses sp = stage_passes(c, pr, s, m, z3f, z3b);
    stages.push_back({s, sp.f, sp.b, sp.w});
    if (P == 1) sequence = sp.sequence;
  }
  double sum_fb = 0, max_fb = 0, max_fbw = 0, f = 0, b = 0, w = 0;
  for (const auto& s : stages) {
    const double count = s.stage == 1 && P > 2 ? P - 2 : 1;  // the middle kind stands for P - 2
    sum_fb += count * (s.f + s.b + s.w);
    max_fb = std::max(max_fb, s.f + s.b);
    max_fbw = std::max(max_fbw, s.f + s.b + s.w);
    f = std::max(f, s.f);
    b = std::max(b, s.b);
    w = std::max(w, s.w);
  }
  const double p2p = p2p_time(c);
  const double hops = 2.0 * (P - 1) * p2p;
  // The schedule's closed form (its registry entry's traits, strategies/schedules/).
  const strat::StagePassTimes times{.micro_batches = m,
                                    .stages = P,
                                    .chunks = v,
                                    .sum_fbw = sum_fb,
                                    .max_fb = max_fb,
                                    .max_fbw = max_fbw,
                                    .f = f,
                                    .b = b,
                                    .w = w,
                                    .hops = hops};
  const strat::ScheduleTraits& traits = strat::schedule_traits(c.schedule);
  double pipeline = traits.pipeline_time(times);
  if (P == 1) pipeline = sequence;  // one stage: every pass in order, the host's lead carried
  Estimate e;
  double step = pipeline, exposed_dp = 0, peak = 0;
  const bool after_backward =
      base_.training.framework.gradient_reduction == strat::GradientReduction::kAfterBackward;
  const double sync = seconds(base_.training.framework.host.sync);
  for (const auto& s : stages) {
    const StageStatic& st = stage_static(c, s.stage);
    const int L = stage_layers(c, s.stage);
    // Ends of the last backward: stage 0 at the pipeline's end, later stages one backward and
    // transfer earlier each (flush schedules).
    const double end = async || post_validation ? pipeline : pipeline - s.stage * (b + p2p);
    // The overlap rule: buckets on the dp stream as the last backward produces their chunks.
    const bool has_head = s.stage == strat::head_stage_of(c.schedule, P);
    double ready = 0, dp_end = 0, total_b = s.b + s.w;
    std::size_t next = 0;
    for (int k = 0; next < st.buckets.size(); ++k) {
      ready += k == 0 ? (has_head ? hb + hw : 0.0) : (k <= L ? lb + lw : eb + ew);
      if (after_backward) ready = total_b;  // the reduction starts after the whole backward
      // Every bucket that closes at chunk k (the experts' closes with the embedding's).
      while (next < st.buckets.size() && st.buckets[next].first == k) {
        dp_end = std::max(dp_end, ready) + st.buckets[next].second;
        ++next;
      }
    }
    double exposed = std::max(0.0, dp_end - total_b);
    // Asynchronous schedules reduce after each stage-local step's last backward, nothing
    // overlapped (async_reduction.cpp): every bucket exposed, at every update.
    if (async) {
      exposed = 0;
      for (const auto& bucket : st.buckets) exposed += bucket.second;
    }
    // --overlap-param-gather: the gathers queue back to back from the step's start and the
    // stage's first forward (s (f + p2p) in with a flush schedule) waits, chunk by chunk, for
    // the ones its chunks need; what that adds to the forward is exposed.
    double gather_delay = 0;
    if (!st.param_gathers.empty()) {
      const double start = async || post_validation ? 0.0 : s.stage * (f + p2p);
      double gpu = start, comm = 0, forward = 0;
      std::size_t j = 0;
      for (int k = L + 1; k >= 0; --k) {
        const bool waits = j < st.param_gathers.size() && st.param_gathers[j].first == k;
        while (j < st.param_gathers.size() && st.param_gathers[j].first == k) {
          comm += st.param_gathers[j++].second;
        }
        if (waits) gpu = std::max(gpu, comm);
        const double fk =
            k == 0 ? (has_head ? pr.head.forward : 0.0)
                   : (k <= L ? pr.layer.forward : (s.stage == 0 ? pr.embed.forward : 0.0));
        gpu += fk;
        forward += fk;
      }
      gather_delay = gpu - start - forward;
    }
    const int updates = traits.updates != nullptr ? traits.updates(m) : 1;
    // The optimizer's host (optimizer_host, host_emission.cpp): its work once the backward is
    // issued, then its syncs wait for the reductions; the step is issued after both. An
    // asynchronous schedule's every update reduces, steps and (ZeRO-1) gathers in line.
    const double per_update_dp = async ? exposed + st.param_gather : 0.0;
    const double gpu_ready = end + (async ? 0.0 : exposed);
    double host = end + st.optimizer_host;
    if (st.optimizer_syncs > 0) host = std::max(host, gpu_ready) + st.optimizer_syncs * sync;
    const double after = async ? updates * (st.optimizer + per_update_dp)
                               : updates * st.optimizer + st.param_gather + gather_delay;
    step = std::max(step, std::max(gpu_ready, host) + after);
    if (s.stage == 0) {
      exposed_dp = async ? updates * per_update_dp : exposed + st.param_gather + gather_delay;
    }
    // Memory floor (the header's rule).
    const bool paci_mem =
        c.schedule == PipelineSchedule::kPaci && base_.parallel.paci_mode == strat::PaciMode::kMem;
    int sets = traits.activation_sets != nullptr ? traits.activation_sets(P, s.stage, m)
                                                 : std::min(m, P - s.stage);
    const double stage_input =
        static_cast<double>(c.micro_batch) * base_.model.seq_len / c.cp * base_.model.hidden *
        cost::bytes_per_element(base_.training.precision) / (c.sequence_parallel ? c.tp : 1);
    const int moe_on_stage = stage_moe_layers(c, s.stage);
    double kept = (L - moe_on_stage) * pr.stored + moe_on_stage * pr.moe_stored;
    if (c.recompute == cost::Recompute::kFull && strat::grouped_recompute(base_.training)) {
      kept = 0;  // the builder's per-layer bytes (checkpoint_groups.hpp), virtual stage by stage
      for (const auto& range : stage_ranges(c, s.stage)) {
        kept += strat::stage_kept_bytes(strat::stage_checkpoints(base_.training, range.second),
                                        {pr.stored, pr.full, pr.plain_stored});
      }
    }
    double act = sets * (paci_mem ? stage_input : kept);
    if (has_head) act += pr.head_stored;
    peak = std::max(peak, st.state_bytes + act + st.non_tensor_bytes);
  }
  e.step_s = step;
  e.peak_bytes = peak;
  if (strat::is_searched(c.schedule)) {
    // The builder's search input (zero_bubble_costs.cpp): each stage's forward keeps its layers'
    // stored activations (and the logits on the last); M_B the larger of the first two stages'.
    const double logits = pr.head_stored;
    auto kept = [&](int stage) {
      return stage_layers(c, stage) * pr.stored + (stage == P - 1 ? logits : 0.0);
    };
    const double m_b = std::max(kept(0), kept(std::min(1, P - 1)));
    const double limit = strat::searched_memory_multiple(c.schedule) * P * m_b;
    e.schedule_refused = kept(0) > limit || kept(P - 1) > limit;
  }
  const double busy = m * max_fbw;
  e.bubble_fraction = pipeline > 0 ? std::max(0.0, 1.0 - busy / pipeline) : 0.0;
  int most_layers = 0;  // the busiest stage's blocking collectives
  for (int stage = 0; stage < P; ++stage)
    most_layers = std::max(most_layers, stage_layers(c, stage));
  const int all_moe = base_.model.moe.moe_layers_in(0, base_.model.layers);
  const double moe_share = static_cast<double>(all_moe) / base_.model.layers;
  const double layer_comm = (1 - moe_share) * (pr.layer.forward_comm + pr.layer.backward_comm) +
                            moe_share * (pr.moe.forward_comm + pr.moe.backward_comm);
  e.exposed_comm_s = m * (most_layers * layer_comm) + hops + exposed_dp;
  const double replicas = static_cast<double>(c.dp) * c.cp;
  const double flops = m * replicas * c.tp *
                       (static_cast<double>(base_.model.layers - all_moe) * pr.model_flops +
                        all_moe * pr.moe_flops + pr.embed_flops + pr.head_flops);
  const double peak_rate = costs_.at(c.gpus).device().peak(base_.training.precision).flop_per_s;
  e.tokens_per_s = base_.tokens_per_step() / step;
  e.mfu = flops / step / c.gpus / peak_rate;
  e.staleness = closed_form_staleness(c.schedule, P, m);
  return e;
}

}  // namespace parasim::plan
