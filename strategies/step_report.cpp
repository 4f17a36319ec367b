#include "strategies/step_report.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace parasim::strat {
namespace {

using sim::OpId;
using sim::Time;

// When a group really ran: from the last member's arrival to its end.
std::vector<Time> group_starts(const sim::Workload& w, const sim::SimResult& r) {
  std::vector<Time> start(w.group_count(), Time::zero());
  for (sim::GroupId g = 0; g < w.group_count(); ++g) {
    for (OpId m : w.members(g)) start[g] = sim::max(start[g], r.op_start[m]);
  }
  return start;
}

// Length of [a, b) not covered by the sorted, disjoint intervals `busy`.
double uncovered(Time a, Time b, const std::vector<std::pair<Time, Time>>& busy) {
  if (b <= a) return 0;
  double covered = 0;
  auto it = std::lower_bound(busy.begin(), busy.end(), std::make_pair(a, Time::zero()),
                             [](const auto& x, const auto& y) { return x.second < y.first; });
  for (; it != busy.end() && it->first < b; ++it) {
    const Time lo = sim::max(a, it->first);
    const Time hi = sim::min(b, it->second);
    if (hi > lo) covered += (hi - lo).to_seconds();
  }
  return (b - a).to_seconds() - covered;
}

}  // namespace

StepReport make_step_report(const Scenario& sc, const BuiltWorkload& built,
                            const sim::SimResult& r) {
  const sim::Workload& w = built.workload;
  StepReport rep;
  rep.scenario = sc.name;
  rep.simulated_devices = static_cast<int>(w.device_count());
  rep.full = built.full;
  rep.total_gpus = sc.cluster.total_gpus();
  rep.micro_batches = sc.micro_batches();
  rep.step_time_s = r.makespan.to_seconds();
  rep.tokens_per_step = sc.tokens_per_step();
  rep.tokens_per_s = rep.tokens_per_step / rep.step_time_s;
  rep.model_flops_per_step = built.model_flops_per_step.value;
  rep.executed_flops_per_step = built.executed_flops_per_step.value;
  const double peak = sc.cluster.device.peak(sc.training.precision).flop_per_s;
  rep.model_tflops_per_gpu = rep.model_flops_per_step / rep.step_time_s / rep.total_gpus / 1e12;
  rep.mfu = rep.model_flops_per_step / rep.step_time_s / rep.total_gpus / peak;
  rep.hfu = rep.executed_flops_per_step / rep.step_time_s / rep.total_gpus / peak;
  rep.ops = w.op_count();
  rep.events = r.events_processed;
  rep.hbm_capacity_bytes = sc.cluster.device.hbm_capacity.value;

  // Bubbles.
  Time pipeline_end = Time::zero();
  std::vector<double> busy(w.device_count(), 0.0);
  for (const auto& span : built.spans) {
    pipeline_end = sim::max(pipeline_end, r.op_end[span.last]);
    busy[span.device] += (r.op_end[span.last] - r.op_start[span.first]).to_seconds();
  }
  rep.pipeline_time_s = pipeline_end.to_seconds();
  rep.bubble_fraction.assign(static_cast<std::size_t>(sc.parallel.pp), 0.0);
  std::vector<int> per_stage(static_cast<std::size_t>(sc.parallel.pp), 0);
  for (sim::DeviceId d = 0; d < w.device_count(); ++d) {
    const auto stage = static_cast<std::size_t>(built.devices[d].stage);
    rep.bubble_fraction[stage] += 1.0 - busy[d] / rep.pipeline_time_s;
    ++per_stage[stage];
  }
  for (std::size_t s = 0; s < per_stage.size(); ++s) rep.bubble_fraction[s] /= per_stage[s];

  // Exposed communication and bytes.
  const auto starts = group_starts(w, r);
  std::vector<std::vector<std::pair<Time, Time>>> compute_busy(w.device_count());
  for (sim::DeviceId d = 0; d < w.device_count(); ++d) {
    for (OpId o : w.stream_ops(built.devices[d].compute_stream)) {
      if (r.op_end[o] > r.op_start[o]) compute_busy[d].emplace_back(r.op_start[o], r.op_end[o]);
    }
    std::sort(compute_busy[d].begin(), compute_busy[d].end());
  }
  for (sim::GroupId g = 0; g < w.group_count(); ++g) {
    const auto kind = static_cast<std::size_t>(built.groups[g].kind);
    const sim::Group& group = w.group(g);
    const double senders = group.point_to_point ? 1.0 : group.members_count;
    rep.comm_bytes[kind] += group.bytes_per_member * senders * built.gpus_per_simulated_device;
    for (OpId m : w.members(g)) {
      const sim::DeviceId d = w.device_of(m);
      rep.exposed_comm_s[kind] += uncovered(starts[g], r.op_end[m], compute_busy[d]);
    }
  }
  for (auto& e : rep.exposed_comm_s) e /= static_cast<double>(w.device_count());

  // Collective table, keyed by (kind, op, group size) in a fixed order.
  std::map<std::tuple<int, int, int>, std::pair<CollectiveSummary, double>> table;
  for (sim::GroupId g = 0; g < w.group_count(); ++g) {
    const GroupInfo& info = built.groups[g];
    auto& [row, member_count] = table[{static_cast<int>(info.kind), static_cast<int>(info.op),
                                       info.group_size}];
    row.kind = comm_kind_name(info.kind);
    row.op = cost::collective_name(info.op);
    row.group_size = info.group_size;
    row.count_per_gpu += 1;
    row.mean_message_bytes += info.message_bytes;
    row.mean_time_s += (r.op_end[w.members(g)[0]] - starts[g]).to_seconds();
    member_count += w.group(g).members_count;
  }
  for (auto& [key, entry] : table) {
    auto& [row, members] = entry;
    const double n = row.count_per_gpu;
    row.mean_message_bytes /= n;
    row.mean_time_s /= n;
    // Each simulated device took part in members/devices of the instances.
    row.count_per_gpu = members / static_cast<double>(w.device_count());
    if (row.mean_time_s > 0) {
      row.algbw_bytes_per_s = row.mean_message_bytes / row.mean_time_s;
      row.busbw_bytes_per_s = row.algbw_bytes_per_s *
                              cost::busbw_factor(static_cast<cost::CollectiveKind>(std::get<1>(key)),
                                                 row.group_size);
    }
    rep.collectives.push_back(row);
  }
  for (sim::LinkId l = 0; l < w.link_count(); ++l) {
    if (!built.link_is_egress[l]) continue;
    const double bytes = r.link_bytes[l] * built.gpus_per_simulated_device;
    (built.link_is_inter[l] ? rep.link_bytes_inter_node : rep.link_bytes_intra_node) += bytes;
  }

  // Memory.
  for (sim::DeviceId d = 0; d < w.device_count(); ++d) {
    DeviceMemory m;
    m.device = w.device(d).name;
    m.stage = built.devices[d].stage;
    m.peak_bytes = static_cast<double>(r.peak_memory_bytes[d]);
    for (std::size_t c = 0; c < w.memory_categories().size(); ++c) {
      m.breakdown_bytes.emplace_back(w.memory_categories()[c],
                                     static_cast<double>(r.peak_breakdown_bytes[d][c]));
    }
    rep.memory.push_back(std::move(m));
  }

  // Optimizer time (first device) and critical path by category.
  for (OpId o : w.stream_ops(built.devices[0].compute_stream)) {
    if (w.op(o).category == built.optimizer_category) {
      rep.optimizer_s += (r.op_end[o] - r.op_start[o]).to_seconds();
    }
  }
  // Consecutive path ops can overlap in time (both members of a transfer are on the path);
  // each moment is counted once, for the op that ends it.
  std::map<std::string, double> path;
  Time covered_to = Time::zero();
  for (OpId o : r.critical_path) {
    const sim::Op& op = w.op(o);
    const Time begin = sim::max(
        covered_to, op.kind == sim::OpKind::kGroupMember ? starts[op.group] : r.op_start[o]);
    if (r.op_end[o] > begin) path[w.text(op.category)] += (r.op_end[o] - begin).to_seconds();
    covered_to = sim::max(covered_to, r.op_end[o]);
  }
  rep.critical_path_s.assign(path.begin(), path.end());
  return rep;
}

}  // namespace parasim::strat
