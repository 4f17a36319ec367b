// Workload builder: the framework's host thread (strategies/framework/). One host stream per
// simulated device issues every GPU op, in the order the framework's Python loop does: per
// pipeline item (its micro-batch's and transfers' host work, then its steps), then the step's
// data-parallel reduction and optimizer. Syncs close the open host op; the next one waits for
// the GPU op issued last (the drain) and starts with the syncs' cost.
#include "strategies/workload_builder_impl.hpp"

namespace parasim::strat::detail {

const std::vector<StepHost>& Builder::host_plan(const std::vector<LayerStep>& steps,
                                                HostContext context) {
  const int key = (context.layer ? 1 : 0) | (context.backward ? 2 : 0) |
                  (context.checkpointed ? 4 : 0);
  auto [it, added] = host_plans_.try_emplace({&steps, key});
  if (added) {
    it->second = step_host_costs(steps, context, fw_, costs_.device().kernel_launch_overhead);
  }
  return it->second;
}

void Builder::host_begin(std::size_t dev, const char* label, int index) {
  HostCursor& h = host_[dev];
  h.item_first = kNone;
  h.label = out_.workload.intern(label);
  h.index = index;
}

void Builder::host_issue(std::size_t dev, OpId gpu, StepHost step, sim::Time last_body,
                         bool member) {
  HostCursor& h = host_[dev];
  const sim::Time first = h.elapsed + (member ? step.total : step.first);
  h.elapsed += step.total;
  h.pending.push_back(sim::IssueSpec{gpu, kNone, first, h.elapsed, member ? sim::Time{} : last_body});
}

OpId Builder::host_close(std::size_t dev) {
  HostCursor& h = host_[dev];
  if (h.elapsed == sim::Time::zero() && h.pending.empty()) return kNone;  // waits carry over
  auto& w = out_.workload;
  const OpId op = w.add_compute(streams_[dev].host, h.elapsed, h.label, cat_host_, h.index, queue_);
  for (OpId before : h.waits) w.add_dependency(before, op);
  for (const sim::IssueSpec& is : h.pending) {
    w.set_issue(is.op, op, is.issue_first, is.issue_last, is.last_body);
  }
  if (h.item_first == kNone) h.item_first = op;
  h.elapsed = sim::Time::zero();
  h.pending.clear();
  h.waits.clear();
  return op;
}

void Builder::host_sync(std::size_t dev, OpId gpu, int count) {
  if (count <= 0) return;
  out_.devices[dev].host_syncs += count;
  if (host_syncs_wait_) {
    host_close(dev);
    if (gpu != kNone) host_[dev].waits.push_back(gpu);
  }
  host_work(dev, fw_.host.sync * count);
}

void Builder::host_item_start(std::size_t dev, const PipelineItem& item, OpId previous_gpu) {
  const auto& c = fw_.counts;
  const auto& h = fw_.host;
  const sim::Time launch = costs_.device().kernel_launch_overhead;
  static constexpr const char* kLabels[] = {"host F", "host B", "host W", "host optimizer"};
  host_begin(dev, kLabels[static_cast<int>(item.kind)], item.micro_batch);
  if (fw_.cuda_graphs && item.kind != ItemKind::kOptimizer) host_work(dev, launch);  // the replay
  const int vstage = item.chunk * pp_ + out_.devices[dev].stage;
  const int last_vstage = pp_ * chunks_ - 1;
  const bool receives = (item.kind == ItemKind::kForward && vstage > 0) ||
                        (item.kind == ItemKind::kBackward && vstage < last_vstage);
  if (receives) {
    host_work(dev, h.collective_call);  // the receive's call; its wait is emit_p2p's
    host_sync(dev, previous_gpu, c.p2p_syncs);
  }
  if (item.kind == ItemKind::kForward) {
    host_work(dev, h.micro_batch + eager_launches(c.micro_batch_kernels, h.forward_op_no_grad,
                                                  launch));
    host_sync(dev, previous_gpu, c.forward_start_syncs);
  } else if (item.kind == ItemKind::kBackward) {
    host_sync(dev, previous_gpu, c.backward_start_syncs);
  }
}

void Builder::host_item_end(std::size_t dev, const PipelineItem& item, OpId last_gpu) {
  const auto& c = fw_.counts;
  const int vstage = item.chunk * pp_ + out_.devices[dev].stage;
  const int last_vstage = pp_ * chunks_ - 1;
  if (item.kind == ItemKind::kForward) host_sync(dev, last_gpu, c.forward_end_syncs);
  if (item.kind == ItemKind::kBackward) host_sync(dev, last_gpu, c.backward_end_syncs);
  const bool sends = (item.kind == ItemKind::kForward && vstage < last_vstage) ||
                     (item.kind == ItemKind::kBackward && vstage > 0);
  if (sends) host_work(dev, fw_.host.collective_call);  // the send's call; its wait: emit_p2p
  host_close(dev);
}

int Builder::stage_parameter_tensors(int stage) const {
  return sc_.stage_layer_count(stage) * layer_parameter_tensors(sc_.model) +
         embedding_parameter_tensors(sc_.model, stage, pp_);
}

void Builder::host_optimizer(std::size_t dev, int stage, const std::vector<OpId>& waits,
                             const std::vector<OpId>& optimizer_ops) {
  const auto& c = fw_.counts;
  const auto& h = fw_.host;
  const sim::Time launch = costs_.device().kernel_launch_overhead;
  const int tensors = stage_parameter_tensors(stage);
  const bool fp16 = sc_.training.precision == cost::Dtype::kFp16;
  const int per_tensor_syncs = fp16 ? c.fp16_step_syncs_per_tensor * tensors : 0;
  host_work(dev, h.step + eager_launches(c.step_kernels + c.step_kernels_per_tensor * tensors,
                                         h.forward_op_no_grad, launch));
  const int syncs = c.step_syncs + per_tensor_syncs;
  out_.devices[dev].host_syncs += syncs;
  if (syncs > 0 && host_syncs_wait_) {
    host_close(dev);
    for (OpId op : waits) {
      if (op != kNone) host_[dev].waits.push_back(op);
    }
  }
  host_work(dev, h.sync * syncs);
  for (OpId op : optimizer_ops) host_issue(dev, op, StepHost{}, sim::Time::zero(), false);
}

}  // namespace parasim::strat::detail
