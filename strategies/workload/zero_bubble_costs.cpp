// Workload builder: the input of the zero-bubble order search (zb-1p, zb-2p) from the workload's
// own costs, and the search itself (zero_bubble_search.hpp).
#include <algorithm>

#include "costmodel/diagnostics.hpp"
#include "strategies/workload/workload_builder_impl.hpp"

namespace parasim::strat::detail {
namespace {

// Uncontended time of a list of layer steps: compute blocks take their time, collectives their
// plan's closed form (cost::estimate_time); a step starts when the steps it waits for end.
sim::Time steps_time(const std::vector<LayerStep>& steps, const cost::CostModel& costs,
                     const cost::GroupPlacement& tp_group) {
  std::vector<sim::Time> end(steps.size());
  sim::Time last;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const LayerStep& step = steps[i];
    sim::Time start;
    if (step.after.empty() || i == 0) {
      start = i == 0 ? sim::Time::zero() : end[i - 1];
    } else {
      for (int j : step.after) start = sim::max(start, end[static_cast<std::size_t>(j)]);
    }
    const sim::Time took =
        step.is_collective
            ? cost::estimate_time(plan_step(costs, step.collective, tp_group), costs.cluster())
            : step.compute.time;
    end[i] = start + took;
    last = sim::max(last, end[i]);
  }
  return last;
}

// The middle element of the sorted values (the upper one of an even count).
sim::Time median(std::vector<sim::Time> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

ZeroBubbleInput Builder::zero_bubble_input() const {
  ZeroBubbleInput in;
  in.micro_batches = m_;
  const ActivationBytes act = activation_bytes(layer_);  // experts: refused (dispatchers.cpp)
  std::vector<sim::Time> f, b, w;
  for (int s = 0; s < pp_; ++s) {
    const cost::GroupPlacement& tp = tp_place_[static_cast<std::size_t>(s) * dp_sim_];
    const int layers = sc_.stage_layer_count(s);
    const bool first = s == 0, last = s == sc_.head_stage();
    auto pass = [&](const std::vector<LayerStep>& layer, const std::vector<LayerStep>& embed,
                    const std::vector<LayerStep>& head) {
      sim::Time t = steps_time(layer, costs_, tp) * layers;
      if (first) t += steps_time(embed, costs_, tp);
      if (last) t += steps_time(head, costs_, tp);
      return t;
    };
    f.push_back(pass(layer_.forward, embed_.forward, head_.forward));
    b.push_back(pass(layer_.backward_input, embed_.backward_input, head_.backward_input));
    w.push_back(pass(layer_.weight_grad, embed_.weight_grad, head_.weight_grad));
    // Activations a forward keeps, what the backward frees (the loss's fp32 inputs on the last
    // stage) and what the W pass frees (the rest), as emit_item allocates them.
    const double kept = layers * act.stored + (last ? act.logits : 0.0);
    const double freed_by_b = last ? act.loss_fp32 : 0.0;
    in.forward_bytes.push_back(kept);
    in.backward_bytes.push_back(-freed_by_b);
    in.weight_grad_bytes.push_back(freed_by_b - kept);
  }
  // The implementation schedules on uniform stage times, the median over stages of each pass
  // (sail-sg/zero-bubble-pipeline-parallelism, megatron/core/pipeline_parallel/zb_schedules.py,
  // get_zero_bubble_forward_backward_func: "Using uniform f/b/w timing for now"); the stages
  // then run the order with their own simulated times.
  in.forward.assign(f.size(), median(f));
  in.backward.assign(b.size(), median(b));
  in.weight_grad.assign(w.size(), median(w));
  // One activation transfer between neighbours, as emit_p2p plans it; the median over the hops.
  const double bytes = static_cast<double>(sc_.training.micro_batch) * sc_.model.seq_len /
                       sc_.parallel.cp * sc_.model.hidden *
                       cost::bytes_per_element(sc_.training.precision) / sc_.parallel.tp;
  std::vector<sim::Time> hops;
  for (int s = 0; s + 1 < pp_; ++s) {
    const bool inter = layout_.pipeline_link(s, s + 1, 0, 0) == cost::LinkClass::kInterNode;
    const auto plan =
        costs_.collective(cost::CollectiveKind::kSendRecv, cost::Bytes{bytes},
                          inter ? cost::GroupPlacement{2, 1, 2} : cost::GroupPlacement{2, 2, 1});
    hops.push_back(cost::estimate_time(plan, costs_.cluster()));
  }
  in.comm = hops.empty() ? sim::Time::zero() : median(hops);
  // The limit: p (zb-1p) or 2p (zb-2p) times one micro-batch's activations, M_B taken as the
  // larger of the first two stages' (zb_schedules.py: max_pending_backward * max(f_mem[:2])).
  const double m_b = std::max(in.forward_bytes[0], in.forward_bytes[std::min(1, pp_ - 1)]);
  in.memory_limit = searched_memory_multiple(sc_.parallel.schedule) * pp_ * m_b;
  return in;
}

ZeroBubbleOrder Builder::searched_order() const {
  auto order = search_zero_bubble_order(zero_bubble_input());
  if (!order) {
    cost::Diagnostics d(sc_.source_file.empty() ? sc_.name : sc_.source_file);
    d.add("/parallel/schedule",
          fmt::format("{}: no order keeps every stage's activations within its limit of {} x pp "
                      "micro-batches' (a stage's single forward needs more); use the other "
                      "automatic schedule or zb-h1 / zb-h2",
                      schedule_name(sc_.parallel.schedule),
                      searched_memory_multiple(sc_.parallel.schedule)));
    throw cost::InputError(std::move(d));
  }
  return std::move(*order);
}

}  // namespace parasim::strat::detail
