// Workload builder: the framework's host thread (strategies/framework/). One host stream per
// simulated device issues every GPU op, in the order the framework's Python loop does: per
// pipeline item (its micro-batch's and transfers' host work, then its steps), then the step's
// data-parallel reduction and optimizer. Syncs close the open host op; the next one waits for
// the GPU op issued last (the drain) and starts with the syncs' cost.
#include "strategies/workload/workload_builder_impl.hpp"

namespace parasim::strat::detail {

const std::vector<StepHost>& Builder::host_plan(const std::vector<LayerStep>& steps,
                                                HostContext context) {
  const int key =
      (context.layer ? 1 : 0) | (context.backward ? 2 : 0) | (context.checkpointed ? 4 : 0);
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
  h.pending.push_back(
      sim::IssueSpec{gpu, kNone, first, h.elapsed, member ? sim::Time{} : last_body});
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

namespace {
HostItem host_item(ItemKind k) {
  switch (k) {
    case ItemKind::kForward:
      return HostItem::kForward;
    case ItemKind::kBackward:
      return HostItem::kBackward;
    case ItemKind::kWeightGrad:
      return HostItem::kWeightGrad;
    case ItemKind::kOptimizer:
      break;
  }
  return HostItem::kOptimizer;
}
}  // namespace

void Builder::host_item_start(std::size_t dev, const PipelineItem& item, OpId previous_gpu) {
  static constexpr const char* kLabels[] = {"host F", "host B", "host W", "host optimizer"};
  host_begin(dev, kLabels[static_cast<int>(item.kind)], item.micro_batch);
  const int vstage = sc_.virtual_stage(out_.devices[dev].stage, item.chunk);
  const int last_vstage = pp_ * chunks_ - 1;
  const PipelineSchedule s = sc_.parallel.schedule;  // the V's turn neither sends nor receives
  const bool receives =
      (item.kind == ItemKind::kForward && vstage > 0 && hop_crosses_gpus(s, pp_, vstage - 1)) ||
      (item.kind == ItemKind::kBackward && vstage < last_vstage &&
       hop_crosses_gpus(s, pp_, vstage));
  const bool loads = loads_batch(fw_, vstage, last_vstage, sc_.head_stage() == 0);
  for (const HostAction& a : item_start_host(fw_, host_item(item.kind), receives, loads,
                                             costs_.device().kernel_launch_overhead)) {
    host_work(dev, a.work);
    host_sync(dev, previous_gpu, a.syncs);
  }
}

void Builder::host_item_end(std::size_t dev, const PipelineItem& item, OpId last_gpu) {
  const int vstage = sc_.virtual_stage(out_.devices[dev].stage, item.chunk);
  const int last_vstage = pp_ * chunks_ - 1;
  const PipelineSchedule s = sc_.parallel.schedule;
  const bool sends =
      (item.kind == ItemKind::kForward && vstage < last_vstage &&
       hop_crosses_gpus(s, pp_, vstage)) ||
      (item.kind == ItemKind::kBackward && vstage > 0 && hop_crosses_gpus(s, pp_, vstage - 1));
  for (const HostAction& a : item_end_host(fw_, host_item(item.kind), sends)) {
    host_work(dev, a.work);
    host_sync(dev, last_gpu, a.syncs);
  }
  host_close(dev);
}

int Builder::stage_parameter_tensors(int stage) const {
  return sc_.stage_layer_count(stage) * layer_parameter_tensors(sc_.model) +
         embedding_parameter_tensors(sc_.model, stage, sc_.head_stage());
}

void Builder::host_optimizer(std::size_t dev, int stage, const std::vector<OpId>& waits,
                             const std::vector<OpId>& optimizer_ops) {
  const HostAction a = optimizer_host(fw_, stage_parameter_tensors(stage),
                                      sc_.training.precision == cost::Dtype::kFp16,
                                      costs_.device().kernel_launch_overhead);
  host_work(dev, a.work);
  out_.devices[dev].host_syncs += a.syncs;
  if (a.syncs > 0 && host_syncs_wait_) {
    host_close(dev);
    for (OpId op : waits) {
      if (op != kNone) host_[dev].waits.push_back(op);
    }
  }
  host_work(dev, fw_.host.sync * a.syncs);
  for (OpId op : optimizer_ops) host_issue(dev, op, StepHost{}, sim::Time::zero(), false);
}

}  // namespace parasim::strat::detail
