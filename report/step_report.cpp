#include "report/step_report.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace parasim::strat {
namespace {

using sim::OpId;
using sim::Time;

// Length of [a, b) not covered by the sorted, disjoint intervals `busy`.
double uncovered(Time a, Time b, const std::vector<std::pair<Time, Time>>& busy) {
  if (b <= a) return 0;
  Time covered;  // whole picoseconds: a fully covered span gives exactly 0, never -0.0
  auto it = std::lower_bound(busy.begin(), busy.end(), std::make_pair(a, Time::zero()),
                             [](const auto& x, const auto& y) { return x.second < y.first; });
  for (; it != busy.end() && it->first < b; ++it) {
    const Time lo = sim::max(a, it->first);
    const Time hi = sim::min(b, it->second);
    if (hi > lo) covered += hi - lo;
  }
  return (b - a - covered).to_seconds();
}

// Staleness per stage (on the stage's first simulated device) and weight versions held.
void staleness_and_versions(const BuiltWorkload& built, const sim::SimResult& r, StepReport& rep) {
  const std::size_t stages = static_cast<std::size_t>(built.shape.stages);
  rep.staleness.assign(stages, {});
  rep.weight_versions.assign(stages, 1);
  const bool pinned = built.shape.schedule == PipelineSchedule::kPipeDream2BW;
  const int group = built.shape.micro_batches;
  std::vector<sim::DeviceId> device_of_stage(stages, sim::kNone);
  for (sim::DeviceId d = 0; d < built.devices.size(); ++d) {
    auto& slot = device_of_stage[static_cast<std::size_t>(built.devices[d].stage)];
    if (slot == sim::kNone) slot = d;
  }
  for (std::size_t s = 0; s < stages; ++s) {
    const sim::DeviceId dev = device_of_stage[s];
    std::vector<Time> updates;
    std::map<int, Time> forward_start, backward_start, backward_end;
    for (const auto& span : built.spans) {
      if (span.device != dev || span.chunk != 0) continue;
      switch (span.kind) {
        case ItemKind::kOptimizer: updates.push_back(r.op_end[span.last]); break;
        case ItemKind::kForward: forward_start[span.micro_batch] = r.op_start[span.first]; break;
        case ItemKind::kBackward:
          backward_start[span.micro_batch] = r.op_start[span.first];
          backward_end[span.micro_batch] = r.op_end[span.last];
          break;
        default: break;
      }
    }
    std::sort(updates.begin(), updates.end());
    auto version_at = [&](Time t) {
      return static_cast<int>(std::upper_bound(updates.begin(), updates.end(), t) - updates.begin());
    };
    std::map<int, int> version_of;  // micro-batch -> version its forward used
    for (const auto& [mb, t] : forward_start) {
      version_of[mb] = pinned ? version_at(forward_start[mb - mb % group]) : version_at(t);
    }
    std::map<int, int> histogram;
    long long total = 0;
    StageStaleness& out = rep.staleness[s];
    for (const auto& [mb, t] : backward_start) {
      const int crossed = version_at(t) - version_of[mb];
      ++histogram[crossed];
      total += crossed;
      out.max = std::max(out.max, crossed);
    }
    out.histogram.assign(histogram.begin(), histogram.end());
    out.mean = backward_start.empty()
                   ? 0.0
                   : static_cast<double>(total) / static_cast<double>(backward_start.size());
    if (!stashes_weights(built.shape.schedule)) continue;
    // Versions held at once: the live one and every stashed one an in-flight micro-batch needs.
    // Events in time order, releases before acquisitions at equal times.
    std::vector<std::tuple<Time, int, int>> events;  // (time, 0 release / 1 update / 2 acquire, version)
    for (const auto& [mb, t] : forward_start) events.emplace_back(t, 2, version_of[mb]);
    for (const auto& [mb, t] : backward_end) events.emplace_back(t, 0, version_of[mb]);
    for (Time t : updates) events.emplace_back(t, 1, 0);
    std::sort(events.begin(), events.end());
    std::map<int, int> live;
    int current = 0, most = 1;
    for (const auto& [t, what, version] : events) {
      if (what == 0 && --live[version] == 0) live.erase(version);
      if (what == 1) ++current;
      if (what == 2) ++live[version];
      const int held = static_cast<int>(live.size()) + (live.count(current) ? 0 : 1);
      most = std::max(most, held);
    }
    rep.weight_versions[s] = most;
  }
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
  rep.schedule = schedule_name(built.shape.schedule);
  rep.asynchronous = is_asynchronous(built.shape.schedule);
  rep.steps_simulated = built.steps.total;
  rep.warmup_steps = built.steps.warmup;
  rep.simulated_time_s = r.makespan.to_seconds();
  // Steady-state window of runs over several steps (asynchronous schedules, post-validation):
  // between the ends of stage 0's last gradient pass of the warm-up and of the run (device 0 is
  // stage 0; the pass is W when the backward is split).
  const bool steady = built.steps.total > 1;
  const ItemKind last_pass = splits_weight_gradient(built.shape.schedule) && !rep.asynchronous
                                 ? ItemKind::kWeightGrad
                                 : ItemKind::kBackward;
  Time window_begin = Time::zero(), window_end = r.makespan;
  if (steady) {
    const int m = built.shape.micro_batches;
    for (const auto& span : built.spans) {
      if (span.device != 0 || span.kind != last_pass) continue;
      if (span.micro_batch == built.steps.warmup * m - 1) window_begin = r.op_end[span.last];
      if (span.micro_batch == built.steps.total * m - 1) window_end = r.op_end[span.last];
    }
    rep.step_time_s = (window_end - window_begin).to_seconds() /
                      (built.steps.total - built.steps.warmup);
  } else {
    rep.step_time_s = r.makespan.to_seconds();
  }
  rep.tokens_per_step = sc.tokens_per_step();
  rep.tokens_per_s = rep.tokens_per_step / rep.step_time_s;
  rep.model_flops_per_step = built.model_flops_per_step.value;
  rep.executed_flops_per_step = built.executed_flops_per_step.value;
  const double peak = built.device.peak(sc.training.precision).flop_per_s;  // a profile's, if any
  rep.model_tflops_per_gpu = rep.model_flops_per_step / rep.step_time_s / rep.total_gpus / 1e12;
  rep.mfu = rep.model_flops_per_step / rep.step_time_s / rep.total_gpus / peak;
  rep.hfu = rep.executed_flops_per_step / rep.step_time_s / rep.total_gpus / peak;
  rep.ops = w.op_count();
  rep.events = r.events_processed;
  rep.hbm_capacity_bytes = built.device.hbm_capacity.value;

  // Bubbles: idle share of the window.
  Time pipeline_end = Time::zero();
  for (const auto& span : built.spans) {
    if (span.kind != ItemKind::kForward && span.kind != ItemKind::kOptimizer) {
      pipeline_end = sim::max(pipeline_end, r.op_end[span.last]);
    }
  }
  if (!steady) window_end = pipeline_end;
  rep.pipeline_time_s = steady ? rep.step_time_s : pipeline_end.to_seconds();
  // Busy time is the union of the items' intervals: items of dynamic schedules can overlap
  // (a forward's opening collective runs on the tp stream while an optimizer step finishes).
  std::vector<std::vector<std::pair<Time, Time>>> intervals(w.device_count());
  for (const auto& span : built.spans) {
    const Time lo = sim::max(window_begin, r.op_start[span.first]);
    const Time hi = sim::min(window_end, r.op_end[span.last]);
    if (hi > lo) intervals[span.device].emplace_back(lo, hi);
  }
  std::vector<double> busy(w.device_count(), 0.0);
  for (sim::DeviceId d = 0; d < w.device_count(); ++d) {
    auto& list = intervals[d];
    std::sort(list.begin(), list.end());
    Time covered_to = Time::zero();
    for (const auto& [lo, hi] : list) {
      const Time from = sim::max(lo, covered_to);
      if (hi > from) busy[d] += (hi - from).to_seconds();
      covered_to = sim::max(covered_to, hi);
    }
  }
  const double window_s = (window_end - window_begin).to_seconds();
  rep.window_begin_s = window_begin.to_seconds();
  rep.window_end_s = window_end.to_seconds();
  rep.bubble_fraction.assign(static_cast<std::size_t>(sc.parallel.pp), 0.0);
  std::vector<int> per_stage(static_cast<std::size_t>(sc.parallel.pp), 0);
  for (sim::DeviceId d = 0; d < w.device_count(); ++d) {
    const auto stage = static_cast<std::size_t>(built.devices[d].stage);
    rep.bubble_fraction[stage] += 1.0 - busy[d] / window_s;
    ++per_stage[stage];
  }
  for (std::size_t s = 0; s < per_stage.size(); ++s) {
    rep.bubble_fraction[s] /= per_stage[s];
    if (rep.bubble_fraction[s] < 0 && rep.bubble_fraction[s] > -1e-9) rep.bubble_fraction[s] = 0;
  }

  // Exposed communication and bytes.
  const auto starts = sim::group_start_times(w, r);
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
  const double per_step = 1.0 / built.steps.total;  // asynchronous runs span several steps
  for (auto& e : rep.exposed_comm_s) e *= per_step / static_cast<double>(w.device_count());
  for (auto& b : rep.comm_bytes) b *= per_step;

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
    row.count_per_gpu = members / static_cast<double>(w.device_count()) * per_step;
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
    (built.link_is_inter[l] ? rep.link_bytes_inter_node : rep.link_bytes_intra_node) +=
        bytes * per_step;
  }

  staleness_and_versions(built, r, rep);

  // Memory.
  for (sim::DeviceId d = 0; d < w.device_count(); ++d) {
    DeviceMemory m;
    m.device = w.device(d).name;
    m.stage = built.devices[d].stage;
    m.peak_bytes = static_cast<double>(r.peak_memory_bytes[d]);
    double weights = 0;
    for (std::size_t c = 0; c < w.memory_categories().size(); ++c) {
      m.breakdown_bytes.emplace_back(w.memory_categories()[c],
                                     static_cast<double>(r.peak_breakdown_bytes[d][c]));
      if (w.memory_categories()[c] == "weights") weights = m.breakdown_bytes.back().second;
    }
    // Stashed weight versions beyond the live copy (PipeDream, 2BW) sit on top of the ledger.
    const int versions = rep.weight_versions[static_cast<std::size_t>(m.stage)];
    m.breakdown_bytes.emplace_back("stashed weights", weights * (versions - 1));
    m.peak_bytes += weights * (versions - 1);
    m.fits_in_hbm = m.peak_bytes <= rep.hbm_capacity_bytes;
    rep.fits_in_hbm = rep.fits_in_hbm && m.fits_in_hbm;
    rep.memory.push_back(std::move(m));
  }

  // The optimizer step on the first device: its compute ops in issue order, by label, then the
  // all-gather that returns the updated parameters (Shampoo/DASH's update all-gather, ZeRO-1/2's
  // param all-gather) from its last member's arrival; optimizer_s is their sum.
  auto add_part = [&](const std::string& name, double s) {
    auto it = std::find_if(rep.optimizer_breakdown_s.begin(), rep.optimizer_breakdown_s.end(),
                           [&](const auto& part) { return part.first == name; });
    if (it == rep.optimizer_breakdown_s.end()) {
      rep.optimizer_breakdown_s.emplace_back(name, s);
    } else {
      it->second += s;
    }
  };
  for (OpId o : w.stream_ops(built.devices[0].compute_stream)) {
    if (w.op(o).category == built.optimizer_category) {
      add_part(w.text(w.op(o).label), (r.op_end[o] - r.op_start[o]).to_seconds());
    }
  }
  for (sim::GroupId g = 0; g < w.group_count(); ++g) {
    const OpId m = w.members(g)[0];
    if (w.device_of(m) != 0) continue;
    const std::string& label = w.text(w.op(m).label);
    if (label == "optimizer update all-gather" || label == "param all-gather") {
      add_part(label == "param all-gather" ? "param all-gather" : "update all-gather",
               (r.op_end[m] - starts[g]).to_seconds());
    }
  }
  for (auto& [name, s] : rep.optimizer_breakdown_s) {
    s *= per_step;
    rep.optimizer_s += s;
  }
  rep.optimizer_host_ops = built.optimizer_host_ops;
  rep.optimizer_host_syncs = built.optimizer_host_syncs;
  rep.framework = sc.training.framework.name;
  for (const SimulatedDevice& dev : built.devices) {
    Time busy;
    for (OpId o : w.stream_ops(dev.host_stream)) busy += r.op_end[o] - r.op_start[o];
    rep.host_busy_s += busy.to_seconds();
    rep.host_syncs_per_step += dev.host_syncs;
  }
  rep.host_busy_s *= per_step / static_cast<double>(built.devices.size());
  rep.host_syncs_per_step *= per_step / static_cast<double>(built.devices.size());
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
  if (auto it = path.find("host"); it != path.end()) rep.host_critical_path_s = it->second * per_step;
  rep.critical_path_s.assign(path.begin(), path.end());
  std::stable_sort(rep.critical_path_s.begin(), rep.critical_path_s.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return rep;
}

}  // namespace parasim::strat
