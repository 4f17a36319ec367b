#pragma once
// parasim::sim::Workload — what the engine executes: devices, their streams, the links between
// them, and a program of ops on each stream. The engine knows nothing about training.
//
// Semantics
// - A stream runs its ops one at a time. Its ops sit in one or more queues, each in the order the
//   ops were added; when the stream is free it starts the head of the first queue (lowest index)
//   whose head is ready. One queue is a fixed program; several express a priority policy (for
//   example "a waiting backward before a new forward"). Decisions are taken once all events of an
//   instant have been processed, so equal-time readiness always resolves by priority.
// - An op is ready when every op it depends on has finished.
// - A compute op occupies its stream for `duration`.
// - A group op (collective or point-to-point transfer) is one op per member, each on the member's
//   stream. The group starts when every member has reached it (is at its stream head with its
//   dependencies done); it then runs its phases one after another: a phase waits its latency,
//   then moves its flows over the links, sharing each link max-min fairly with every other flow
//   on it; when the last phase ends, every member op finishes at once.
// - Memory is a ledger: an op may add bytes to a (device, memory category) account when it starts
//   and when it ends (negative to free). Devices start with `base_memory` per category.
// - Host issue (an eager framework: PyTorch issues every kernel from a host thread). A stream
//   added as StreamKind::kHost is a host thread of its device; its ops are ordinary compute ops
//   whose duration is the host time of issuing a run of GPU work (the sum of that work's per-op
//   host costs), run one after another in program order. A sync (a value read back,
//   torch.cuda.synchronize) is an ordinary dependency of a host op on a GPU op. A GPU op (compute
//   op or group member on a device stream of the same device) may name the host op that issues
//   it (set_issue), with two offsets from the host op's start: `issue_first`, when its first
//   kernel has been issued, and `issue_last`, when its last one has, plus `last_body`, the GPU
//   time of its last kernel (0 <= issue_first <= issue_last <= the host op's duration). Then
//     - it does not start before host_start + issue_first: it waits at its stream head (for the
//       host op to start, if it has not yet);
//     - a compute op does not end before host_start + issue_last + last_body: its duration is
//       max(duration x slowdown, host_start + issue_last + last_body - start), fixed when it
//       starts (the host op has started by then);
//     - a group member does not arrive at the rendezvous before host_start + issue_last (the
//       collective has been called); its time after that is its flows'.
//   An op issued at an instant is ready for that instant's decisions (priority still decides).
//   The host runs ahead of the GPU freely: nothing but a dependency makes a host op wait.
//   Host ops neither slow nor are slowed by the overlap slowdown (they do not use the GPU).
//   Exactness (cost::EagerIssue, costmodel/eager_issue.hpp, is the per-kernel closed form): a run
//   of kernels k = 1..m issued at host times t_k with GPU bodies b_k, each kernel its own GPU op
//   (issue_first = issue_last = t_k, last_body = duration = b_k) on an otherwise idle stream,
//   ends exactly where EagerIssue puts it (gpu_k = max(gpu_{k-1}, t_k) + b_k), for all values.
//   A GPU op that stands for a block of kernels ends at E' = max(s + sum b, t_m + b_m), s its
//   start, where the per-kernel recursion gives E = max(s + sum b, max_k (t_k + b_k + ... + b_m));
//   so E' <= E <= E' + min(b_1 + ... + b_{m-1}, t_m - t_1): exact when the block is GPU-bound
//   (every b_k >= t_{k+1} - t_k) or host-bound (every b_k <= t_{k+1} - t_k); otherwise never
//   later than kernel-by-kernel issue, and earlier by at most the block's issue span or its GPU
//   time less the last kernel's, whichever is smaller. Along a chain of blocks on one stream the
//   errors do not add up (a block ending e early lets the next start at most e early), so the
//   chain ends early by at most the largest block's bound. The makespan of a host op and the
//   ops it issues is max(host op end, last GPU op end), EagerIssue::elapsed()'s max(host, gpu).
//
// Names are interned labels plus an optional index ("fwd L3[12]"), so that millions of ops cost
// no string allocation each.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/time.hpp"

namespace parasim::sim {

using OpId = std::uint32_t;
using StreamId = std::uint32_t;
using DeviceId = std::uint32_t;
using LinkId = std::uint32_t;
using GroupId = std::uint32_t;
using LabelId = std::uint32_t;
constexpr std::uint32_t kNone = 0xFFFFFFFFu;
constexpr int kMaxMemoryCategories = 16;

enum class OpKind : std::uint8_t { kCompute, kGroupMember };
// kDevice: a GPU stream (kernels, collectives). kHost: the host thread that issues its device's
// kernels (see "Host issue" above).
enum class StreamKind : std::uint8_t { kDevice, kHost };

struct Device {
  std::string name;
};

struct Stream {
  DeviceId device;
  StreamKind kind = StreamKind::kDevice;
  std::string name;
  std::vector<std::vector<OpId>> queues;  // priority order; each in execution order
};

struct Link {
  std::string name;
  double bytes_per_s;  // capacity, one direction
};

// One flow of a group phase: `bytes` over one or two links (egress of the sender, ingress of the
// receiver); the flow's rate is the max-min fair share over the links it crosses.
// `delivered`: the traffic the flow stands for, when a phase reaches only part of the link
// (calibrated plans push bytes = delivered / efficiency through it, as does the compute-overlap
// slowdown); 0 means `bytes`. Link traffic reports count `delivered`.
// `max_bytes_per_s`: a cap on the flow's own rate (a fully connected mesh: the links to the
// peers it talks to), on top of its links' fair shares; 0: none.
struct FlowSpec {
  LinkId links[2] = {kNone, kNone};
  double bytes = 0;
  double delivered = 0;
  double max_bytes_per_s = 0;
};

struct PhaseSpec {
  Time latency;
  std::uint32_t flows_begin = 0;
  std::uint32_t flows_count = 0;
};

struct Group {
  std::uint32_t members_begin = 0;  // into Workload::group_members_
  std::uint32_t members_count = 0;
  std::uint32_t phases_begin = 0;   // into Workload::phases_
  std::uint32_t phases_count = 0;
  double bytes_per_member = 0;      // for reports: what each member sends in total
  bool point_to_point = false;      // a send/recv pair: traced with a flow arrow
  // A copy engine's DMA between a GPU and its host (optimizer offload), or a transfer beside
  // compute that takes none of its SMs (the TP overlap's chunks: strategies/layers/
  // tp_overlap.hpp): it neither slows the device's compute nor is slowed by it
  // (set_overlap_slowdown).
  bool copy_engine = false;
};

// One set_memory call as given, before deltas of the same op and category are merged: what an
// allocator replay takes as one tensor (allocated, or freed by size; report/memory/
// allocator_replay.hpp). Nonzero amounts only, one piece per phase.
struct MemoryPiece {
  OpId op = 0xFFFFFFFFu;
  std::uint8_t category = 0;
  bool at_start = true;
  std::int64_t bytes = 0;  // > 0 allocates, < 0 frees
  // Which tensor, where the builder says (0: not said): a free names the allocation it ends by its
  // tag and size.
  std::uint64_t tag = 0;
};

struct MemoryDelta {
  std::uint8_t category = 0;
  std::int64_t at_start = 0;  // bytes added when the op starts
  std::int64_t at_end = 0;    // bytes added when the op ends (negative frees)
  std::uint32_t next = 0xFFFFFFFFu;  // next delta of the same op (another category), or none
};

// How a GPU op is issued by a host op (offsets from the host op's start; see "Host issue").
struct IssueSpec {
  OpId op = kNone;    // the GPU op issued
  OpId host = kNone;  // the host op that issues it
  Time issue_first;  // its first kernel has been issued
  Time issue_last;   // its last kernel has been issued (the collective called)
  Time last_body;    // GPU time of its last kernel (compute ops; 0 for group members)
};

// 40 bytes (the issue index fills what was padding), so host issue costs workloads without it
// nothing in memory.
struct Op {
  OpKind kind = OpKind::kCompute;
  StreamId stream = 0;
  Time duration;               // compute ops only
  GroupId group = kNone;       // group members only
  LabelId label = 0;
  LabelId category = 0;
  std::int32_t index = -1;     // shown as label[index] when >= 0
  std::uint32_t memory = kNone;  // first of the op's memory deltas (a chain), or kNone
  std::uint32_t issue = kNone;   // its IssueSpec (Workload::issue), or kNone: issued at once
};

class Workload {
 public:
  DeviceId add_device(std::string name);
  StreamId add_stream(DeviceId device, std::string name,
                      StreamKind kind = StreamKind::kDevice);
  LinkId add_link(std::string name, double bytes_per_s);

  // Labels and categories are interned: the same text gives the same id.
  LabelId intern(std::string_view text);
  const std::string& text(LabelId id) const { return labels_[id]; }

  OpId add_compute(StreamId stream, Time duration, LabelId label, LabelId category,
                   std::int32_t index = -1, std::uint8_t queue = 0);

  // A group over `member_streams` (one per member, distinct devices) running `phases`, whose
  // flows are in `flows` (phase i owns its flows_count flows after the previous phases' flows;
  // flows_begin is filled in here). Returns the group; its member ops are members(group).
  GroupId add_group(std::span<const StreamId> member_streams, std::span<const PhaseSpec> phases,
                    std::span<const FlowSpec> flows, LabelId label, LabelId category,
                    std::int32_t index = -1, bool point_to_point = false,
                    double bytes_per_member = 0, std::uint8_t queue = 0);

  // Marks `g` as a copy engine's transfer (Group::copy_engine).
  void set_copy_engine(GroupId g) { groups_[g].copy_engine = true; }

  // `after` starts only once `before` has finished.
  void add_dependency(OpId before, OpId after);

  // `gpu_op` is issued by `host_op` (see "Host issue" above): it starts no earlier than
  // host_start + issue_first; a compute op ends no earlier than host_start + issue_last +
  // last_body; a group member arrives no earlier than host_start + issue_last. Throws
  // std::invalid_argument, saying what is wrong, unless `host_op` is a compute op on a host
  // stream, `gpu_op` is on a device stream of the same device and not yet issued by another,
  // 0 <= issue_first <= issue_last <= the host op's duration, and 0 <= last_body <= the compute
  // op's duration (0 for a group member, whose time is its flows').
  void set_issue(OpId gpu_op, OpId host_op, Time issue_first, Time issue_last,
                 Time last_body = Time::zero());

  // `tag` names the tensor for the allocator replay (MemoryPiece::tag); the ledger ignores it.
  void set_memory(OpId op, std::uint8_t category, std::int64_t at_start, std::int64_t at_end,
                  std::uint64_t tag = 0);
  std::uint8_t memory_category(std::string_view name);  // interned, at most kMaxMemoryCategories
  void set_base_memory(DeviceId device, std::uint8_t category, std::int64_t bytes);

  // Interference between computation and communication on one device, as `parasim calibrate`'s
  // overlap probe measures it (1 = none, the default here; both >= 1). A compute op progresses
  // at 1 / `compute` of its rate for as long as a group op of its device is in flight (from the
  // group's start to its end), so only the overlapped part of it is stretched; a group phase
  // whose flows start while a compute op runs on one of its members' devices pushes
  // `communication` x its bytes through the links (so link byte counts include the slowdown;
  // applied when the phase starts and not re-evaluated while it runs, an approximation). Throws
  // std::invalid_argument for a factor < 1.
  void set_overlap_slowdown(double compute, double communication);
  double compute_slowdown() const { return compute_slowdown_; }
  double communication_slowdown() const { return communication_slowdown_; }

  // Read access.
  std::size_t device_count() const { return devices_.size(); }
  std::size_t stream_count() const { return streams_.size(); }
  std::size_t op_count() const { return ops_.size(); }
  std::size_t group_count() const { return groups_.size(); }
  std::size_t link_count() const { return links_.size(); }
  const Device& device(DeviceId d) const { return devices_[d]; }
  const Stream& stream(StreamId s) const { return streams_[s]; }
  const Link& link(LinkId l) const { return links_[l]; }
  const Op& op(OpId o) const { return ops_[o]; }
  const Group& group(GroupId g) const { return groups_[g]; }
  std::span<const OpId> members(GroupId g) const {
    return {group_members_.data() + groups_[g].members_begin, groups_[g].members_count};
  }
  std::span<const PhaseSpec> phases(GroupId g) const {
    return {phases_.data() + groups_[g].phases_begin, groups_[g].phases_count};
  }
  std::span<const FlowSpec> flows(const PhaseSpec& p) const {
    return {flows_.data() + p.flows_begin, p.flows_count};
  }
  const std::vector<std::pair<OpId, OpId>>& dependencies() const { return dependencies_; }
  // The op's IssueSpec, or nullptr when nothing issues it.
  const IssueSpec* issue(OpId o) const {
    return ops_[o].issue == kNone ? nullptr : &issues_[ops_[o].issue];
  }
  std::span<const IssueSpec> issues() const { return issues_; }
  bool is_host(OpId o) const { return streams_[ops_[o].stream].kind == StreamKind::kHost; }
  // The op's first memory delta (follow MemoryDelta::next), or nullptr.
  const MemoryDelta* memory_delta(OpId o) const {
    return ops_[o].memory == kNone ? nullptr : &memory_deltas_[ops_[o].memory];
  }
  const MemoryDelta* next_delta(const MemoryDelta& d) const {
    return d.next == kNone ? nullptr : &memory_deltas_[d.next];
  }
  const std::vector<std::string>& memory_categories() const { return memory_categories_; }
  // Every set_memory call's amounts in call order (MemoryPiece).
  const std::vector<MemoryPiece>& memory_pieces() const { return memory_pieces_; }
  std::int64_t base_memory(DeviceId d, std::uint8_t category) const;
  DeviceId device_of(OpId o) const { return streams_[ops_[o].stream].device; }

  // Every op of a stream, queue after queue (not in time order).
  std::vector<OpId> stream_ops(StreamId s) const;

  // "label[index]" or "label".
  std::string op_name(OpId o) const;

  // Capacity hints for builders that know their size up front (saves re-allocation and copying).
  void reserve(std::size_t ops, std::size_t dependencies, std::size_t flows,
               std::size_t issues = 0) {
    ops_.reserve(ops);
    group_members_.reserve(ops);
    dependencies_.reserve(dependencies);
    flows_.reserve(flows);
    issues_.reserve(issues);
  }

 private:
  std::vector<Device> devices_;
  std::vector<Stream> streams_;
  std::vector<Link> links_;
  std::vector<Op> ops_;
  std::vector<Group> groups_;
  std::vector<OpId> group_members_;
  std::vector<PhaseSpec> phases_;
  std::vector<FlowSpec> flows_;
  std::vector<std::pair<OpId, OpId>> dependencies_;
  std::vector<IssueSpec> issues_;
  std::vector<MemoryDelta> memory_deltas_;
  std::vector<MemoryPiece> memory_pieces_;
  std::vector<std::string> memory_categories_;
  std::vector<std::int64_t> base_memory_;  // device * kMaxMemoryCategories + category
  std::vector<std::string> labels_;
  std::unordered_map<std::string, LabelId> label_ids_;
  double compute_slowdown_ = 1.0;
  double communication_slowdown_ = 1.0;
};

}  // namespace parasim::sim
