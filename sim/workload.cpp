#include "sim/workload.hpp"

#include <cassert>
#include <stdexcept>

namespace parasim::sim {

DeviceId Workload::add_device(std::string name) {
  devices_.push_back(Device{std::move(name)});
  base_memory_.resize(devices_.size() * kMaxMemoryCategories, 0);
  return static_cast<DeviceId>(devices_.size() - 1);
}

StreamId Workload::add_stream(DeviceId device, std::string name, StreamKind kind) {
  assert(device < devices_.size() && "add_stream: unknown device");
  streams_.push_back(Stream{device, kind, std::move(name), {std::vector<OpId>{}}});
  return static_cast<StreamId>(streams_.size() - 1);
}

LinkId Workload::add_link(std::string name, double bytes_per_s) {
  if (!(bytes_per_s > 0)) throw std::invalid_argument("link " + name + ": capacity must be > 0");
  links_.push_back(Link{std::move(name), bytes_per_s});
  return static_cast<LinkId>(links_.size() - 1);
}

LabelId Workload::intern(std::string_view text) {
  auto it = label_ids_.find(std::string(text));
  if (it != label_ids_.end()) return it->second;
  labels_.emplace_back(text);
  auto id = static_cast<LabelId>(labels_.size() - 1);
  label_ids_.emplace(labels_.back(), id);
  return id;
}

namespace {
void enqueue(Stream& s, std::uint8_t queue, OpId op) {
  if (s.queues.size() <= queue) s.queues.resize(queue + 1u);
  s.queues[queue].push_back(op);
}
}  // namespace

OpId Workload::add_compute(StreamId stream, Time duration, LabelId label, LabelId category,
                           std::int32_t index, std::uint8_t queue) {
  assert(stream < streams_.size());
  Op op;
  op.kind = OpKind::kCompute;
  op.stream = stream;
  op.duration = duration;
  op.label = label;
  op.category = category;
  op.index = index;
  ops_.push_back(op);
  auto id = static_cast<OpId>(ops_.size() - 1);
  enqueue(streams_[stream], queue, id);
  return id;
}

GroupId Workload::add_group(std::span<const StreamId> member_streams,
                            std::span<const PhaseSpec> phases, std::span<const FlowSpec> flows,
                            LabelId label, LabelId category, std::int32_t index,
                            bool point_to_point, double bytes_per_member,
                            std::uint8_t queue) {
  Group g;
  g.members_begin = static_cast<std::uint32_t>(group_members_.size());
  g.members_count = static_cast<std::uint32_t>(member_streams.size());
  g.phases_begin = static_cast<std::uint32_t>(phases_.size());
  g.phases_count = static_cast<std::uint32_t>(phases.size());
  g.point_to_point = point_to_point;
  g.bytes_per_member = bytes_per_member;
  auto gid = static_cast<GroupId>(groups_.size());
  std::uint32_t flow_cursor = static_cast<std::uint32_t>(flows_.size());
  std::size_t used = 0;
  for (const auto& p : phases) {
    PhaseSpec copy = p;
    copy.flows_begin = flow_cursor;
    flow_cursor += p.flows_count;
    used += p.flows_count;
    phases_.push_back(copy);
  }
  if (used != flows.size()) throw std::invalid_argument("add_group: phases do not own all flows");
  for (const auto& f : flows) {
    for (LinkId l : f.links) {
      if (l != kNone && l >= links_.size()) throw std::invalid_argument("add_group: bad link");
    }
    flows_.push_back(f);
  }
  for (StreamId s : member_streams) {
    Op op;
    op.kind = OpKind::kGroupMember;
    op.stream = s;
    op.group = gid;
    op.label = label;
    op.category = category;
    op.index = index;
    ops_.push_back(op);
    auto id = static_cast<OpId>(ops_.size() - 1);
    enqueue(streams_[s], queue, id);
    group_members_.push_back(id);
  }
  groups_.push_back(g);
  return gid;
}

void Workload::add_dependency(OpId before, OpId after) {
  assert(before < ops_.size() && after < ops_.size());
  dependencies_.emplace_back(before, after);
}

void Workload::set_issue(OpId gpu_op, OpId host_op, Time issue_first, Time issue_last,
                         Time last_body) {
  if (gpu_op >= ops_.size() || host_op >= ops_.size()) {
    throw std::invalid_argument("set_issue: unknown op");
  }
  const Op& gpu = ops_[gpu_op];
  const Op& host = ops_[host_op];
  const auto fail = [&](const std::string& what) {
    throw std::invalid_argument("set_issue(" + op_name(gpu_op) + " issued by " +
                                op_name(host_op) + "): " + what);
  };
  if (!is_host(host_op) || host.kind != OpKind::kCompute) {
    fail("the issuer must be a compute op on a host stream (StreamKind::kHost)");
  }
  if (is_host(gpu_op)) fail("the issued op must be on a device stream, not a host stream");
  if (device_of(gpu_op) != device_of(host_op)) {
    fail("a host op issues only its own device's ops (the issued op is on " +
         devices_[device_of(gpu_op)].name + ", the host op on " +
         devices_[device_of(host_op)].name + ")");
  }
  if (gpu.issue != kNone) {
    fail("the op is already issued by " + op_name(issues_[gpu.issue].host));
  }
  if (!(Time::zero() <= issue_first && issue_first <= issue_last &&
        issue_last <= host.duration)) {
    fail("expected 0 <= issue_first (" + std::to_string(issue_first.picoseconds()) +
         " ps) <= issue_last (" + std::to_string(issue_last.picoseconds()) +
         " ps) <= the host op's duration (" + std::to_string(host.duration.picoseconds()) +
         " ps)");
  }
  if (gpu.kind == OpKind::kGroupMember && last_body != Time::zero()) {
    fail("a group member's last_body must be 0 (its time is its flows')");
  }
  if (gpu.kind == OpKind::kCompute && !(Time::zero() <= last_body && last_body <= gpu.duration)) {
    fail("expected 0 <= last_body (" + std::to_string(last_body.picoseconds()) +
         " ps) <= the op's duration (" + std::to_string(gpu.duration.picoseconds()) + " ps)");
  }
  ops_[gpu_op].issue = static_cast<std::uint32_t>(issues_.size());
  issues_.push_back(IssueSpec{gpu_op, host_op, issue_first, issue_last, last_body});
}

std::uint8_t Workload::memory_category(std::string_view name) {
  for (std::size_t i = 0; i < memory_categories_.size(); ++i) {
    if (memory_categories_[i] == name) return static_cast<std::uint8_t>(i);
  }
  if (memory_categories_.size() >= kMaxMemoryCategories) {
    throw std::length_error("too many memory categories (limit 16)");
  }
  memory_categories_.emplace_back(name);
  return static_cast<std::uint8_t>(memory_categories_.size() - 1);
}

void Workload::set_memory(OpId op, std::uint8_t category, std::int64_t at_start,
                          std::int64_t at_end, std::uint64_t tag) {
  assert(op < ops_.size() && category < memory_categories_.size());
  if (at_start != 0) memory_pieces_.push_back(MemoryPiece{op, category, true, at_start, tag});
  if (at_end != 0) memory_pieces_.push_back(MemoryPiece{op, category, false, at_end, tag});
  std::uint32_t* link = &ops_[op].memory;
  while (*link != kNone) {
    MemoryDelta& d = memory_deltas_[*link];
    if (d.category == category) {
      d.at_start += at_start;
      d.at_end += at_end;
      return;
    }
    link = &d.next;
  }
  *link = static_cast<std::uint32_t>(memory_deltas_.size());
  memory_deltas_.push_back(MemoryDelta{category, at_start, at_end, kNone});
}

void Workload::set_base_memory(DeviceId device, std::uint8_t category, std::int64_t bytes) {
  base_memory_[device * kMaxMemoryCategories + category] = bytes;
}

std::int64_t Workload::base_memory(DeviceId d, std::uint8_t category) const {
  return base_memory_[d * kMaxMemoryCategories + category];
}

std::vector<OpId> Workload::stream_ops(StreamId s) const {
  std::vector<OpId> all;
  for (const auto& q : streams_[s].queues) all.insert(all.end(), q.begin(), q.end());
  return all;
}

std::string Workload::op_name(OpId o) const {
  const Op& op = ops_[o];
  if (op.index < 0) return labels_[op.label];
  return labels_[op.label] + "[" + std::to_string(op.index) + "]";
}

void Workload::set_overlap_slowdown(double compute, double communication) {
  if (!(compute >= 1.0) || !(communication >= 1.0)) {
    throw std::invalid_argument("overlap slowdown factors must be >= 1");
  }
  compute_slowdown_ = compute;
  communication_slowdown_ = communication;
}

}  // namespace parasim::sim
