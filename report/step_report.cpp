#include "report/step_report.hpp"

#include "report/memory/allocator_replay.hpp"

#include <algorithm>
#include <map>
#include <tuple>

// make_step_report in named parts, each filling its fields of the StepReport (definitions in
// step_report.hpp), in this order: what ran, the steady-state window, throughput, bubbles,
// communication (exposed time and bytes, the collective table, link bytes), staleness and weight
// versions, memory (which adds the stashed versions), the optimizer step, the host, the critical
// path.

namespace parasim::strat {
namespace {

using sim::OpId;
using sim::Time;

using Intervals = std::vector<std::pair<Time, Time>>;  // sorted [begin, end) spans

// The window the figures of a step are taken over (step_report.hpp, bubble_fraction).
struct Window {
  bool steady = false;  // a run over several steps: the steady state after the warm-up
  Time begin = Time::zero();
  Time end = Time::zero();
};

// Length of [a, b) not covered by the sorted, disjoint intervals `busy`.
double uncovered(Time a, Time b, const Intervals& busy) {
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

// Length of the union of `list` (sorted here).
double union_length(Intervals& list) {
  std::sort(list.begin(), list.end());
  double length = 0;
  Time covered_to = Time::zero();
  for (const auto& [lo, hi] : list) {
    const Time from = sim::max(lo, covered_to);
    if (hi > from) length += (hi - from).to_seconds();
    covered_to = sim::max(covered_to, hi);
  }
  return length;
}

void describe_run(const Scenario& sc, const BuiltWorkload& built, const sim::SimResult& r,
                  StepReport& rep) {
  const sim::Workload& w = built.workload;
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
  rep.ops = w.op_count();
  rep.events = r.events_processed;
  rep.hbm_capacity_bytes = built.device.hbm_capacity.value;
}

// Steady-state window of runs over several steps (asynchronous schedules, post-validation):
// between the ends of stage 0's last gradient pass of the warm-up and of the run (device 0 is
// stage 0; the pass is W when the backward is split); step_time_s over it. One step: its
// makespan, the window's end set by the bubbles (the pipeline's end).
Window steady_state_window(const BuiltWorkload& built, const sim::SimResult& r, StepReport& rep) {
  Window window{built.steps.total > 1, Time::zero(), r.makespan};
  if (!window.steady) {
    rep.step_time_s = r.makespan.to_seconds();
    return window;
  }
  const ItemKind last_pass = splits_weight_gradient(built.shape.schedule) && !rep.asynchronous
                                 ? ItemKind::kWeightGrad
                                 : ItemKind::kBackward;
  const int m = built.shape.micro_batches;
  for (const auto& span : built.spans) {
    if (span.device != 0 || span.kind != last_pass) continue;
    if (span.micro_batch == built.steps.warmup * m - 1) window.begin = r.op_end[span.last];
    if (span.micro_batch == built.steps.total * m - 1) window.end = r.op_end[span.last];
  }
  rep.step_time_s = (window.end - window.begin).to_seconds() /
                    (built.steps.total - built.steps.warmup);
  return window;
}

// Tokens per second, model and executed FLOPs, MFU and HFU (against a profile's peak, if any).
void throughput(const Scenario& sc, const BuiltWorkload& built, StepReport& rep) {
  rep.tokens_per_step = sc.tokens_per_step();
  rep.tokens_per_s = rep.tokens_per_step / rep.step_time_s;
  rep.model_flops_per_step = built.model_flops_per_step.value;
  rep.executed_flops_per_step = built.executed_flops_per_step.value;
  const double peak = built.device.peak(sc.training.precision).flop_per_s;
  rep.model_tflops_per_gpu = rep.model_flops_per_step / rep.step_time_s / rep.total_gpus / 1e12;
  rep.mfu = rep.model_flops_per_step / rep.step_time_s / rep.total_gpus / peak;
  rep.hfu = rep.executed_flops_per_step / rep.step_time_s / rep.total_gpus / peak;
}

// Bubbles: idle share of the window per stage (mean over the stage's simulated devices). A single
// step's window ends at the end of the last backward pass on any stage.
void bubbles(const Scenario& sc, const BuiltWorkload& built, const sim::SimResult& r,
             Window& window, StepReport& rep) {
  const sim::Workload& w = built.workload;
  Time pipeline_end = Time::zero();
  for (const auto& span : built.spans) {
    if (span.kind != ItemKind::kForward && span.kind != ItemKind::kOptimizer) {
      pipeline_end = sim::max(pipeline_end, r.op_end[span.last]);
    }
  }
  if (!window.steady) window.end = pipeline_end;
  rep.pipeline_time_s = window.steady ? rep.step_time_s : pipeline_end.to_seconds();
  // Busy time is the union of the items' intervals: items of dynamic schedules can overlap
  // (a forward's opening collective runs on the tp stream while an optimizer step finishes).
  std::vector<Intervals> intervals(w.device_count());
  for (const auto& span : built.spans) {
    const Time lo = sim::max(window.begin, r.op_start[span.first]);
    const Time hi = sim::min(window.end, r.op_end[span.last]);
    if (hi > lo) intervals[span.device].emplace_back(lo, hi);
  }
  const double window_s = (window.end - window.begin).to_seconds();
  rep.window_begin_s = window.begin.to_seconds();
  rep.window_end_s = window.end.to_seconds();
  rep.bubble_fraction.assign(static_cast<std::size_t>(sc.parallel.pp), 0.0);
  std::vector<int> per_stage(static_cast<std::size_t>(sc.parallel.pp), 0);
  for (sim::DeviceId d = 0; d < w.device_count(); ++d) {
    const auto stage = static_cast<std::size_t>(built.devices[d].stage);
    rep.bubble_fraction[stage] += 1.0 - union_length(intervals[d]) / window_s;
    ++per_stage[stage];
  }
  for (std::size_t s = 0; s < per_stage.size(); ++s) {
    rep.bubble_fraction[s] /= per_stage[s];
    if (rep.bubble_fraction[s] < 0 && rep.bubble_fraction[s] > -1e-9) rep.bubble_fraction[s] = 0;
  }
}

// Exposed communication (a group's time from its start while the member's compute stream is
// idle) and bytes sent, by kind, per step.
void exposed_communication(const BuiltWorkload& built, const sim::SimResult& r,
                           const std::vector<Time>& starts, double per_step, StepReport& rep) {
  const sim::Workload& w = built.workload;
  std::vector<Intervals> compute_busy(w.device_count());
  for (sim::DeviceId d = 0; d < w.device_count(); ++d) {
    for (OpId o : w.stream_ops(built.devices[d].compute_stream)) {
      if (r.op_end[o] > r.op_start[o]) compute_busy[d].emplace_back(r.op_start[o], r.op_end[o]);
    }
    std::sort(compute_busy[d].begin(), compute_busy[d].end());
  }
  for (sim::GroupId g = 0; g < w.group_count(); ++g) {
    if (built.groups[g].host_copy) continue;  // offload copies: host_offload_report
    const auto kind = static_cast<std::size_t>(built.groups[g].kind);
    const sim::Group& group = w.group(g);
    const double senders = group.point_to_point ? 1.0 : group.members_count;
    rep.comm_bytes[kind] += group.bytes_per_member * senders * built.gpus_per_simulated_device;
    for (OpId m : w.members(g)) {
      const sim::DeviceId d = w.device_of(m);
      rep.exposed_comm_s[kind] += uncovered(starts[g], r.op_end[m], compute_busy[d]);
    }
  }
  for (auto& e : rep.exposed_comm_s) e *= per_step / static_cast<double>(w.device_count());
  for (auto& b : rep.comm_bytes) b *= per_step;
}

// Collective table, keyed by (kind, op, group size) in a fixed order; nccl-tests' algbw, busbw.
void collective_table(const BuiltWorkload& built, const sim::SimResult& r,
                      const std::vector<Time>& starts, double per_step, StepReport& rep) {
  const sim::Workload& w = built.workload;
  std::map<std::tuple<int, int, int>, std::pair<CollectiveSummary, double>> table;
  for (sim::GroupId g = 0; g < w.group_count(); ++g) {
    const GroupInfo& info = built.groups[g];
    if (info.host_copy) continue;
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
}

// Bytes sent over intra-node links (NVLink) and NICs by all GPUs, per step.
void link_bytes(const BuiltWorkload& built, const sim::SimResult& r, double per_step,
                StepReport& rep) {
  for (sim::LinkId l = 0; l < built.workload.link_count(); ++l) {
    if (!built.link_is_egress[l]) continue;
    const double bytes = r.link_bytes[l] * built.gpus_per_simulated_device;
    (built.link_is_inter[l] ? rep.link_bytes_inter_node : rep.link_bytes_intra_node) +=
        bytes * per_step;
  }
}

// One stage's pipeline items on its first simulated device, as times.
struct StageTimes {
  std::vector<Time> updates;  // ends of its optimizer steps, sorted
  std::map<int, Time> forward_start, backward_start, backward_end;  // by micro-batch
  int version_at(Time t) const {
    return static_cast<int>(std::upper_bound(updates.begin(), updates.end(), t) - updates.begin());
  }
};

StageTimes stage_times(const BuiltWorkload& built, const sim::SimResult& r, sim::DeviceId dev) {
  StageTimes t;
  for (const auto& span : built.spans) {
    if (span.device != dev || span.chunk != 0) continue;
    switch (span.kind) {
      case ItemKind::kOptimizer: t.updates.push_back(r.op_end[span.last]); break;
      case ItemKind::kForward: t.forward_start[span.micro_batch] = r.op_start[span.first]; break;
      case ItemKind::kBackward:
        t.backward_start[span.micro_batch] = r.op_start[span.first];
        t.backward_end[span.micro_batch] = r.op_end[span.last];
        break;
      default: break;
    }
  }
  std::sort(t.updates.begin(), t.updates.end());
  return t;
}

// Updates crossed between each micro-batch's forward (the version it used) and backward start.
StageStaleness stage_staleness(const StageTimes& t, const std::map<int, int>& version_of) {
  StageStaleness out;
  std::map<int, int> histogram;
  long long total = 0;
  for (const auto& [mb, start] : t.backward_start) {
    const int crossed = t.version_at(start) - version_of.at(mb);
    ++histogram[crossed];
    total += crossed;
    out.max = std::max(out.max, crossed);
  }
  out.histogram.assign(histogram.begin(), histogram.end());
  out.mean = t.backward_start.empty()
                 ? 0.0
                 : static_cast<double>(total) / static_cast<double>(t.backward_start.size());
  return out;
}

// Versions held at once: the live one and every stashed one an in-flight micro-batch needs.
// Events in time order, releases before acquisitions at equal times.
int weight_versions_held(const StageTimes& t, const std::map<int, int>& version_of) {
  std::vector<std::tuple<Time, int, int>> events;  // (time, 0 release / 1 update / 2 acquire, version)
  for (const auto& [mb, start] : t.forward_start) events.emplace_back(start, 2, version_of.at(mb));
  for (const auto& [mb, end] : t.backward_end) events.emplace_back(end, 0, version_of.at(mb));
  for (Time u : t.updates) events.emplace_back(u, 1, 0);
  std::sort(events.begin(), events.end());
  std::map<int, int> live;
  int current = 0, most = 1;
  for (const auto& [time, what, version] : events) {
    if (what == 0 && --live[version] == 0) live.erase(version);
    if (what == 1) ++current;
    if (what == 2) ++live[version];
    const int held = static_cast<int>(live.size()) + (live.count(current) ? 0 : 1);
    most = std::max(most, held);
  }
  return most;
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
    const StageTimes t = stage_times(built, r, device_of_stage[s]);
    std::map<int, int> version_of;  // micro-batch -> version its forward used
    for (const auto& [mb, start] : t.forward_start) {
      version_of[mb] = pinned ? t.version_at(t.forward_start.at(mb - mb % group))
                              : t.version_at(start);
    }
    rep.staleness[s] = stage_staleness(t, version_of);
    if (stashes_weights(built.shape.schedule)) {
      rep.weight_versions[s] = weight_versions_held(t, version_of);
    }
  }
}

// Peak memory per device and its breakdown at the peak; stashed weight versions beyond the live
// copy (PipeDream, 2BW) sit on top of the ledger.
void memory(const Scenario& scenario, const BuiltWorkload& built, const sim::SimResult& r,
            StepReport& rep) {
  const sim::Workload& w = built.workload;
  AllocatorReplayOptions replay_options;
  replay_options.expandable_segments =
      scenario.training.allocator_kind() == AllocatorKind::kExpandableSegments;
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
    const int versions = rep.weight_versions[static_cast<std::size_t>(m.stage)];
    m.breakdown_bytes.emplace_back("stashed weights", weights * (versions - 1));
    m.peak_bytes += weights * (versions - 1);
    if (d < built.non_tensor_memory.size()) {
      m.cuda_context_bytes = built.non_tensor_memory[d].cuda_context.value;
      m.nccl_buffer_bytes = built.non_tensor_memory[d].nccl_buffers.value;
      m.dispatch_buffer_bytes = built.non_tensor_memory[d].dispatch_buffers.value;
      m.userbuffer_bytes = built.non_tensor_memory[d].overlap_buffers.value;
    }
    const double outside = m.cuda_context_bytes + m.nccl_buffer_bytes + m.dispatch_buffer_bytes +
                           m.userbuffer_bytes;
    replay_options.capacity_bytes.push_back(
        std::max<std::int64_t>(1, static_cast<std::int64_t>(rep.hbm_capacity_bytes - outside)));
    replay_options.extra_base_bytes.push_back(static_cast<std::int64_t>(weights * (versions - 1)));
    rep.memory.push_back(std::move(m));
  }
  const std::vector<AllocatorReplay> replay = replay_allocator(w, r, replay_options);
  for (std::size_t d = 0; d < rep.memory.size(); ++d) {
    DeviceMemory& m = rep.memory[d];
    m.allocated_bytes = replay[d].allocated_peak_bytes;
    m.reserved_bytes = replay[d].reserved_peak_bytes;
    m.allocator_retries = replay[d].retries;
    m.allocator_out_of_memory = replay[d].out_of_memory;
    m.allocator_out_of_memory_bytes = static_cast<double>(replay[d].first_out_of_memory_bytes);
    // Whether it fits is judged on allocated memory (docs/result.md#reserved-memory: the
    // replay's reserved figure comes from the ledger's aggregate blocks).
    m.device_bytes = m.allocated_bytes + m.cuda_context_bytes + m.nccl_buffer_bytes +
                     m.dispatch_buffer_bytes + m.userbuffer_bytes;
    m.fits_in_hbm = m.device_bytes <= rep.hbm_capacity_bytes;
    rep.fits_in_hbm = rep.fits_in_hbm && m.fits_in_hbm;
  }
}

// The optimizer step on the first device: its compute ops in issue order, by label, then the
// all-gather that returns the updated parameters (Shampoo/DASH's update all-gather, ZeRO-1/2's
// param all-gather) from its last member's arrival; optimizer_s is their sum.
void optimizer_step(const BuiltWorkload& built, const sim::SimResult& r,
                    const std::vector<Time>& starts, double per_step, StepReport& rep) {
  const sim::Workload& w = built.workload;
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
  if (built.offload_step.first != sim::kNone) {  // copies and the CPU's step (docs/offload.md)
    add_part("offloaded step", (r.op_end[built.offload_step.second] -
                                r.op_start[built.offload_step.first])
                                   .to_seconds());
  }
  for (auto& [name, s] : rep.optimizer_breakdown_s) {
    s *= per_step;
    rep.optimizer_s += s;
  }
  rep.optimizer_host_ops = built.optimizer_host_ops;
  rep.optimizer_host_syncs = built.optimizer_host_syncs;
  rep.fp8_quantization_s = built.fp8_quantization_s;
}

// The framework's host thread: busy time of the host stream and syncs, per step, mean over the
// simulated devices.
void host(const Scenario& sc, const BuiltWorkload& built, const sim::SimResult& r,
          double per_step, StepReport& rep) {
  const sim::Workload& w = built.workload;
  rep.framework = sc.training.framework.name;
  for (const SimulatedDevice& dev : built.devices) {
    Time busy;
    for (OpId o : w.stream_ops(dev.host_stream)) busy += r.op_end[o] - r.op_start[o];
    rep.host_busy_s += busy.to_seconds();
    rep.host_syncs_per_step += dev.host_syncs;
  }
  rep.host_busy_s *= per_step / static_cast<double>(built.devices.size());
  rep.host_syncs_per_step *= per_step / static_cast<double>(built.devices.size());
}

// Critical path by op category, largest first. Consecutive path ops can overlap in time (both
// members of a transfer are on the path); each moment is counted once, for the op that ends it.
void critical_path(const sim::Workload& w, const sim::SimResult& r,
                   const std::vector<Time>& starts, double per_step, StepReport& rep) {
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
}

}  // namespace

StepReport make_step_report(const Scenario& sc, const BuiltWorkload& built,
                            const sim::SimResult& r) {
  StepReport rep;
  describe_run(sc, built, r, rep);
  Window window = steady_state_window(built, r, rep);
  throughput(sc, built, rep);
  bubbles(sc, built, r, window, rep);
  const auto starts = sim::group_start_times(built.workload, r);
  const double per_step = 1.0 / built.steps.total;  // asynchronous runs span several steps
  exposed_communication(built, r, starts, per_step, rep);
  collective_table(built, r, starts, per_step, rep);
  link_bytes(built, r, per_step, rep);
  staleness_and_versions(built, r, rep);
  memory(sc, built, r, rep);
  rep.host_offload = host_offload_report(sc, built, r, per_step);
  optimizer_step(built, r, starts, per_step, rep);
  host(sc, built, r, per_step, rep);
  critical_path(built.workload, r, starts, per_step, rep);
  return rep;
}

}  // namespace parasim::strat
