#include "sim/engine.hpp"

#include <algorithm>
#include <string>

#include "sim/event_queue.hpp"
#include "sim/flow_network.hpp"

namespace parasim::sim {
namespace {

enum EventType : std::uint32_t { kOpEnd, kPhaseLatencyEnd, kFlowEnd, kGroupEnd, kIssued };

// Host issue state per op (Workload::set_issue), kept only when the workload has host issue.
constexpr std::uint8_t kIssuer = 1;   // a host op that issues GPU ops
constexpr std::uint8_t kStarted = 2;  // that host op has started
constexpr std::uint8_t kWaiting = 4;  // a GPU op at its stream head, waiting for its issue

// The mutable state of one run, kept out of the header.
class Run {
 public:
  Run(const Workload& w, const EngineOptions& options)
      : w_(w), options_(options), network_(links_of(w)) {}

  SimResult execute();

 private:
  static std::vector<Link> links_of(const Workload& w) {
    std::vector<Link> links;
    links.reserve(w.link_count());
    for (LinkId l = 0; l < w.link_count(); ++l) links.push_back(w.link(l));
    return links;
  }

  void build_successors();
  // Marks a stream for an issue decision at the end of the current instant.
  void wake(StreamId s, OpId enabler);
  void issue_woken();
  void try_issue(StreamId s, OpId enabler);
  bool issued(OpId o);
  void host_started(OpId host);
  void start_op(OpId o, OpId enabler);
  void start_group(GroupId g);
  void start_phase(GroupId g);
  void begin_flows(GroupId g);
  void end_phase(GroupId g);
  void finish_op(OpId o);
  void schedule_changed_flows();
  void apply_memory(OpId o, bool at_start);
  // Overlap interference: compute ops running on a device progress at 1 / compute_slowdown while
  // a group op of the device is in flight (Workload::set_overlap_slowdown).
  struct RunningCompute {
    OpId op;
    double work_left_ps;  // unslowed picoseconds still to run
    Time since;           // when work_left_ps was last brought up to date
    Time not_before;      // host issue: the op's last kernel is issued and run no earlier
    std::uint32_t version;
    bool slowed;
  };
  void push_compute_end(RunningCompute& c);
  void rescale_compute(DeviceId d);  // the device's communication state changed
  bool take_compute_end(OpId o, std::uint32_t version);

  const Workload& w_;
  const EngineOptions& options_;
  FlowNetwork network_;
  EventQueue queue_;
  Time now_;
  SimResult result_;

  std::vector<std::uint32_t> succ_begin_;
  std::vector<OpId> succ_;
  std::vector<std::uint32_t> deps_left_;
  std::vector<std::uint32_t> queue_begin_;  // per stream: first index into cursor_
  // Every stream's queues one after another (streams in order, each stream's in priority
  // order), so that finding a stream's next op reads compact arrays, not each stream's vectors.
  std::vector<OpId> queued_ops_;
  std::vector<std::uint32_t> cursor_;      // per stream queue: index into queued_ops_
  std::vector<std::uint32_t> queue_end_;   // per stream queue: its end in queued_ops_
  std::vector<std::uint8_t> busy_;         // per stream
  std::vector<std::uint8_t> woken_;        // per stream: in woken_list_
  std::vector<OpId> wake_cause_;           // per stream: the op whose end woke it
  std::vector<StreamId> woken_list_;
  std::vector<StreamId> issuing_;          // scratch of issue_woken (keeps its capacity)
  std::vector<std::uint8_t> host_stream_;  // per stream: a host stream (StreamKind::kHost)
  std::vector<std::uint32_t> arrived_;     // per group
  std::vector<OpId> last_arrival_;         // per group
  std::vector<std::uint32_t> phase_;       // per group
  std::vector<std::uint32_t> flows_left_;  // per group
  std::vector<OpId> cause_;                // per op
  std::vector<std::uint8_t> queue_of_;     // per op: its queue on its stream
  std::vector<std::int64_t> memory_;       // device * categories
  std::vector<std::int64_t> memory_total_; // per device
  // Overlap interference (Workload::set_overlap_slowdown), kept only when a factor is not 1.
  bool interference_ = false;
  std::vector<std::uint32_t> computing_;      // per device: compute ops running
  std::vector<std::uint32_t> communicating_;  // per device: group ops in flight
  std::vector<std::vector<RunningCompute>> running_;  // per device: compute ops running
  std::vector<FlowSpec> scaled_flows_;        // scratch
  // Host issue (Workload::set_issue), kept only when the workload has it.
  bool host_issue_ = false;
  std::vector<std::uint8_t> issue_state_;  // per op: kIssuer, kStarted, kWaiting
  std::vector<OpId> first_waiter_;         // per op: GPU ops waiting for this host op to start
  std::vector<OpId> next_waiter_;          // per issue: the next op waiting for the same host op
  std::size_t finished_ = 0;
};

void Run::build_successors() {
  const auto& deps = w_.dependencies();
  succ_begin_.assign(w_.op_count() + 1, 0);
  deps_left_.assign(w_.op_count(), 0);
  for (auto [before, after] : deps) {
    ++succ_begin_[before + 1];
    ++deps_left_[after];
  }
  for (std::size_t i = 1; i < succ_begin_.size(); ++i) succ_begin_[i] += succ_begin_[i - 1];
  succ_.resize(deps.size());
  std::vector<std::uint32_t> fill(succ_begin_.begin(), succ_begin_.end() - 1);
  for (auto [before, after] : deps) succ_[fill[before]++] = after;
}

void Run::apply_memory(OpId o, bool at_start) {
  const DeviceId dev = w_.device_of(o);
  if (options_.record_memory_log && w_.memory_delta(o) != nullptr) {
    result_.memory_log.push_back(MemoryEvent{o, at_start});
  }
  for (const MemoryDelta* d = w_.memory_delta(o); d != nullptr; d = w_.next_delta(*d)) {
    const std::int64_t delta = at_start ? d->at_start : d->at_end;
    if (delta == 0) continue;
    memory_[dev * kMaxMemoryCategories + d->category] += delta;
    std::int64_t& total = memory_total_[dev];
    total += delta;
    if (total > result_.peak_memory_bytes[dev]) {
      result_.peak_memory_bytes[dev] = total;
      std::copy_n(memory_.begin() + dev * kMaxMemoryCategories, kMaxMemoryCategories,
                  result_.peak_breakdown_bytes[dev].begin());
    }
    if (options_.record_memory_timeline) {
      result_.memory_timeline.push_back(MemorySample{now_, dev, total});
    }
  }
}

void Run::wake(StreamId s, OpId enabler) {
  if (busy_[s]) return;
  if (!woken_[s]) {
    woken_[s] = 1;
    woken_list_.push_back(s);
    wake_cause_[s] = enabler;
  } else if (enabler != kNone) {
    wake_cause_[s] = enabler;  // the latest op to end before the decision
  }
}

void Run::issue_woken() {
  // Stream order, so that the outcome never depends on event processing order; host streams
  // first, so that a GPU op issued as its host op starts (issue offset 0) is seen by this
  // decision of its stream.
  std::sort(woken_list_.begin(), woken_list_.end());
  // Streams woken while these issue go to the (emptied) woken list for the next decision; the
  // two vectors trade buffers, so neither is reallocated once grown.
  issuing_.clear();
  issuing_.swap(woken_list_);
  const auto issue = [&](StreamId s) {
    woken_[s] = 0;
    try_issue(s, wake_cause_[s]);
  };
  if (!host_issue_) {
    for (StreamId s : issuing_) issue(s);
    return;
  }
  for (StreamId s : issuing_) {
    if (host_stream_[s] != 0) issue(s);
  }
  for (StreamId s : issuing_) {
    if (host_stream_[s] == 0) issue(s);
  }
}

void Run::try_issue(StreamId s, OpId enabler) {
  if (busy_[s]) return;
  for (std::uint32_t q = queue_begin_[s]; q < queue_begin_[s + 1]; ++q) {
    const std::uint32_t cursor = cursor_[q];
    if (cursor >= queue_end_[q]) continue;
    const OpId o = queued_ops_[cursor];
    if (deps_left_[o] != 0) continue;
    if (host_issue_ && !issued(o)) continue;
    busy_[s] = 1;
    start_op(o, enabler);
    return;
  }
}

// Whether `o` (ready otherwise) has been issued by its host op, if it has one: a compute op at
// host_start + issue_first, a group member at host_start + issue_last. If not, it is made to
// wake its stream when it will be: one kIssued event, pushed now when the host op has started,
// or when it starts (host_started).
bool Run::issued(OpId o) {
  const Op& op = w_.op(o);
  if (op.issue == kNone) return true;
  const IssueSpec& is = w_.issues()[op.issue];
  std::uint8_t& state = issue_state_[o];
  if ((issue_state_[is.host] & kStarted) == 0) {
    if ((state & kWaiting) == 0) {
      state |= kWaiting;
      next_waiter_[op.issue] = first_waiter_[is.host];
      first_waiter_[is.host] = o;
    }
    return false;
  }
  const Time at = result_.op_start[is.host] +
                  (op.kind == OpKind::kCompute ? is.issue_first : is.issue_last);
  if (now_ >= at) return true;
  if ((state & kWaiting) == 0) {
    state |= kWaiting;
    queue_.push(at, 0, kIssued, o);
  }
  return false;
}

void Run::host_started(OpId host) {
  issue_state_[host] |= kStarted;
  for (OpId o = first_waiter_[host]; o != kNone;) {
    const Op& op = w_.op(o);
    const IssueSpec& is = w_.issues()[op.issue];
    queue_.push(now_ + (op.kind == OpKind::kCompute ? is.issue_first : is.issue_last), 0,
                kIssued, o);
    o = next_waiter_[op.issue];
  }
  first_waiter_[host] = kNone;
}

void Run::start_op(OpId o, OpId enabler) {
  const Op& op = w_.op(o);
  cause_[o] = enabler;
  result_.op_start[o] = now_;
  apply_memory(o, true);
  if (host_issue_) {
    issue_state_[o] &= static_cast<std::uint8_t>(~kWaiting);  // a kIssued event left is void
    if ((issue_state_[o] & kIssuer) != 0) host_started(o);
  }
  if (op.kind == OpKind::kCompute) {
    // Its last kernel cannot end before it is issued and has run; when that is what ends the
    // op, the host op is what delayed it (the critical path goes through the host).
    Time not_before = Time::zero();
    if (op.issue != kNone) {
      const IssueSpec& is = w_.issues()[op.issue];
      not_before = result_.op_start[is.host] + is.issue_last + is.last_body;
      if (not_before > now_ + op.duration) cause_[o] = is.host;
    }
    if (interference_ && !w_.is_host(o)) {
      const DeviceId d = w_.device_of(o);
      ++computing_[d];
      running_[d].push_back(RunningCompute{o, static_cast<double>(op.duration.picoseconds()), now_,
                                           not_before, 0, communicating_[d] > 0});
      push_compute_end(running_[d].back());
      return;
    }
    queue_.push(std::max(now_ + op.duration, not_before), 0, kOpEnd, o);
    return;
  }
  const GroupId g = op.group;
  last_arrival_[g] = o;
  if (++arrived_[g] == w_.group(g).members_count) start_group(g);
}

void Run::start_group(GroupId g) {
  // Each member keeps its own arrival as op_start (reports take the group's start as the latest
  // arrival); for the critical path, every earlier member was waiting for the last arrival.
  for (OpId m : w_.members(g)) {
    if (m != last_arrival_[g]) cause_[m] = last_arrival_[g];
  }
  if (interference_ && !w_.group(g).copy_engine) {
    for (OpId m : w_.members(g)) {
      const DeviceId d = w_.device_of(m);
      if (communicating_[d]++ == 0) rescale_compute(d);
    }
  }
  phase_[g] = 0;
  start_phase(g);
}

void Run::start_phase(GroupId g) {
  const auto phases = w_.phases(g);
  if (phase_[g] >= phases.size()) {
    // Through the queue rather than directly, so chains of free groups do not recurse.
    queue_.push(now_, 0, kGroupEnd, g);
    return;
  }
  const PhaseSpec& p = phases[phase_[g]];
  if (p.latency > Time::zero()) {
    queue_.push(now_ + p.latency, 0, kPhaseLatencyEnd, g);
  } else {
    begin_flows(g);
  }
}

void Run::begin_flows(GroupId g) {
  const PhaseSpec& p = w_.phases(g)[phase_[g]];
  flows_left_[g] = 0;
  std::span<const FlowSpec> flows = w_.flows(p);
  if (interference_ && !w_.group(g).copy_engine) {
    bool overlapped = false;
    for (OpId m : w_.members(g)) overlapped = overlapped || computing_[w_.device_of(m)] > 0;
    if (overlapped) {
      scaled_flows_.assign(flows.begin(), flows.end());
      for (FlowSpec& f : scaled_flows_) {
        if (f.delivered <= 0) f.delivered = f.bytes;  // the traffic stays what it was
        f.bytes *= w_.communication_slowdown();
      }
      flows = scaled_flows_;
    }
  }
  for (const FlowSpec& f : flows) {
    if (f.bytes <= 0) continue;
    network_.start(f, now_, g);
    ++flows_left_[g];
    schedule_changed_flows();
  }
  if (flows_left_[g] == 0) end_phase(g);
}

void Run::end_phase(GroupId g) {
  ++phase_[g];
  start_phase(g);
}

void Run::schedule_changed_flows() {
  for (FlowId f : network_.take_changed()) {
    queue_.push(network_.finish_time(f), 0, kFlowEnd, f, network_.version(f));
  }
}

void Run::finish_op(OpId o) {
  result_.op_end[o] = now_;
  ++finished_;
  apply_memory(o, false);
  if (interference_ && !w_.is_host(o)) {
    const DeviceId d = w_.device_of(o);
    if (w_.op(o).kind == OpKind::kCompute) {
      --computing_[d];
    } else if (w_.group(w_.op(o).group).copy_engine) {
      // no interference (Group::copy_engine)
    } else if (--communicating_[d] == 0) {
      rescale_compute(d);
    }
  }
  const StreamId s = w_.op(o).stream;
  busy_[s] = 0;
  ++cursor_[queue_begin_[s] + queue_of_[o]];
  for (std::uint32_t i = succ_begin_[o]; i < succ_begin_[o + 1]; ++i) {
    const OpId next = succ_[i];
    if (--deps_left_[next] == 0) wake(w_.op(next).stream, o);
  }
  wake(s, o);
}

void Run::push_compute_end(RunningCompute& c) {
  const double factor = c.slowed ? w_.compute_slowdown() : 1.0;
  queue_.push(std::max(now_ + Time::ps_rounded(c.work_left_ps * factor), c.not_before), 0, kOpEnd,
              c.op, c.version);
}

void Run::rescale_compute(DeviceId d) {
  const bool slowed = communicating_[d] > 0;
  for (RunningCompute& c : running_[d]) {
    if (c.slowed == slowed) continue;
    const double elapsed = static_cast<double>((now_ - c.since).picoseconds());
    c.work_left_ps -= c.slowed ? elapsed / w_.compute_slowdown() : elapsed;
    if (c.work_left_ps < 0) c.work_left_ps = 0;
    c.since = now_;
    c.slowed = slowed;
    ++c.version;  // the end event pushed before is superseded
    push_compute_end(c);
  }
}

bool Run::take_compute_end(OpId o, std::uint32_t version) {
  auto& list = running_[w_.device_of(o)];
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].op != o) continue;
    if (list[i].version != version) return false;
    list[i] = list.back();
    list.pop_back();
    return true;
  }
  return false;
}

SimResult Run::execute() {
  const std::size_t n = w_.op_count();
  result_.op_start.assign(n, Time::zero());
  result_.op_end.assign(n, Time::zero());
  result_.peak_memory_bytes.assign(w_.device_count(), 0);
  result_.peak_breakdown_bytes.assign(w_.device_count(), {});
  queue_begin_.assign(w_.stream_count() + 1, 0);
  queued_ops_.clear();
  queued_ops_.reserve(n);
  cursor_.clear();
  queue_end_.clear();
  queue_of_.assign(n, 0);
  std::uint32_t queue_count = 0;
  for (StreamId s = 0; s < w_.stream_count(); ++s) {
    queue_begin_[s] = queue_count;
    const auto& qs = w_.stream(s).queues;
    for (std::size_t q = 0; q < qs.size(); ++q) {
      cursor_.push_back(static_cast<std::uint32_t>(queued_ops_.size()));
      for (OpId o : qs[q]) {
        queue_of_[o] = static_cast<std::uint8_t>(q);
        queued_ops_.push_back(o);
      }
      queue_end_.push_back(static_cast<std::uint32_t>(queued_ops_.size()));
    }
    queue_count += static_cast<std::uint32_t>(qs.size());
  }
  queue_begin_[w_.stream_count()] = queue_count;
  busy_.assign(w_.stream_count(), 0);
  woken_.assign(w_.stream_count(), 0);
  host_stream_.assign(w_.stream_count(), 0);
  for (StreamId st = 0; st < w_.stream_count(); ++st) {
    host_stream_[st] = w_.stream(st).kind == StreamKind::kHost ? 1 : 0;
  }
  wake_cause_.assign(w_.stream_count(), kNone);
  arrived_.assign(w_.group_count(), 0);
  last_arrival_.assign(w_.group_count(), kNone);
  phase_.assign(w_.group_count(), 0);
  flows_left_.assign(w_.group_count(), 0);
  interference_ = w_.compute_slowdown() != 1.0 || w_.communication_slowdown() != 1.0;
  computing_.assign(interference_ ? w_.device_count() : 0, 0);
  communicating_.assign(interference_ ? w_.device_count() : 0, 0);
  running_.assign(interference_ ? w_.device_count() : 0, {});
  cause_.assign(n, kNone);
  host_issue_ = !w_.issues().empty();
  if (host_issue_) {
    issue_state_.assign(n, 0);
    first_waiter_.assign(n, kNone);
    next_waiter_.assign(w_.issues().size(), kNone);
    for (const IssueSpec& is : w_.issues()) issue_state_[is.host] |= kIssuer;
  }
  memory_.assign(w_.device_count() * kMaxMemoryCategories, 0);
  memory_total_.assign(w_.device_count(), 0);
  for (DeviceId d = 0; d < w_.device_count(); ++d) {
    for (std::uint8_t c = 0; c < w_.memory_categories().size(); ++c) {
      memory_[d * kMaxMemoryCategories + c] = w_.base_memory(d, c);
      memory_total_[d] += w_.base_memory(d, c);
    }
    result_.peak_memory_bytes[d] = memory_total_[d];
    std::copy_n(memory_.begin() + d * kMaxMemoryCategories, kMaxMemoryCategories,
                result_.peak_breakdown_bytes[d].begin());
    if (options_.record_memory_timeline) {
      result_.memory_timeline.push_back(MemorySample{now_, d, memory_total_[d]});
    }
  }
  build_successors();
  queue_.reserve(std::min<std::size_t>(n, 1u << 20) + 64);

  for (StreamId s = 0; s < w_.stream_count(); ++s) wake(s, kNone);
  issue_woken();
  while (!queue_.empty()) {
    const Event e = queue_.pop();
    now_ = e.time;
    ++result_.events_processed;
    switch (e.type) {
      case kOpEnd:
        // Superseded by a rescale (host ops are not slowed: no running entry).
        if (interference_ && !w_.is_host(e.a) && !take_compute_end(e.a, e.b)) break;
        finish_op(e.a);
        break;
      case kPhaseLatencyEnd:
        begin_flows(e.a);
        break;
      case kFlowEnd: {
        const FlowId f = e.a;
        if (!network_.active(f) || network_.version(f) != e.b) break;  // superseded
        const GroupId g = network_.owner(f);
        network_.finish(f, now_);
        schedule_changed_flows();
        if (--flows_left_[g] == 0) end_phase(g);
        break;
      }
      case kGroupEnd:
        for (OpId m : w_.members(e.a)) finish_op(m);
        break;
      case kIssued:  // a GPU op at its stream head has been issued: its host op wakes the stream
        if ((issue_state_[e.a] & kWaiting) != 0) {
          wake(w_.op(e.a).stream, w_.issues()[w_.op(e.a).issue].host);
        }
        break;
      default:
        break;
    }
    // The instant is over when the next event is later: take the issue decisions now.
    if (!woken_list_.empty() && (queue_.empty() || queue_.top().time > now_)) issue_woken();
  }
  if (finished_ != n) {
    std::string stuck;
    int shown = 0;
    for (StreamId s = 0; s < w_.stream_count() && shown < 8; ++s) {
      for (std::uint32_t q = queue_begin_[s]; q < queue_begin_[s + 1]; ++q) {
        const std::uint32_t cursor = cursor_[q];
        if (cursor < queue_end_[q]) {
          const OpId head = queued_ops_[cursor];
          stuck += "\n  " + w_.device(w_.stream(s).device).name + "/" + w_.stream(s).name +
                   " waits at " + w_.op_name(head);
          if (const IssueSpec* is = w_.issue(head);
              is != nullptr && (issue_state_[is->host] & kStarted) == 0) {
            stuck += " (not issued: its host op " + w_.op_name(is->host) + " never started)";
          }
          ++shown;
        }
      }
    }
    throw WorkloadError("simulation deadlocked: " + std::to_string(n - finished_) +
                        " ops never ran; stream heads:" + stuck);
  }
  result_.makespan = Time::zero();
  OpId last = kNone;
  for (OpId o = 0; o < n; ++o) {
    if (last == kNone || result_.op_end[o] > result_.makespan) {
      result_.makespan = result_.op_end[o];
      last = o;
    }
  }
  for (OpId o = last; o != kNone; o = cause_[o]) result_.critical_path.push_back(o);
  std::reverse(result_.critical_path.begin(), result_.critical_path.end());
  result_.link_bytes = network_.bytes_carried();
  return std::move(result_);
}

}  // namespace

std::vector<Time> group_start_times(const Workload& w, const SimResult& r) {
  std::vector<Time> start(w.group_count(), Time::zero());
  for (GroupId g = 0; g < w.group_count(); ++g) {
    for (OpId m : w.members(g)) start[g] = max(start[g], r.op_start[m]);
  }
  return start;
}

Engine::Engine(const Workload& workload, EngineOptions options)
    : workload_(workload), options_(options) {}

SimResult Engine::run() {
  if (options_.check_graph) {
    GraphCheck check = check_task_graph(workload_);
    if (!check.acyclic) throw WorkloadError(check.message);
  }
  Run run(workload_, options_);
  return run.execute();
}

}  // namespace parasim::sim
