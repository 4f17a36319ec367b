#include "sim/flow_network.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace parasim::sim {

FlowNetwork::FlowNetwork(std::span<const Link> links)
    : capacity_(links.size()),
      link_flows_(links.size()),
      carried_(links.size(), 0.0),
      link_mark_(links.size(), 0),
      cap_left_(links.size(), 0.0),
      unfixed_(links.size(), 0) {
  for (std::size_t i = 0; i < links.size(); ++i) capacity_[i] = links[i].bytes_per_s * 1e-12;
}

FlowId FlowNetwork::start(const FlowSpec& spec, Time now, std::uint32_t owner) {
  FlowId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    flow_mark_.push_back(0);
    flow_fixed_.push_back(0);
  }
  assert(spec.links[0] != spec.links[1] && "a flow crosses two distinct links");
  Flow& f = flows_[id];
  f.links[0] = spec.links[0];
  f.links[1] = spec.links[1];
  f.remaining = spec.bytes;
  f.rate = 0;
  f.cap = spec.max_bytes_per_s > 0 ? spec.max_bytes_per_s * 1e-12
                                   : std::numeric_limits<double>::infinity();
  f.last_update = now;
  f.owner = owner;
  f.active = true;
  ++active_count_;
  for (int i = 0; i < 2; ++i) {
    if (f.links[i] == kNone) continue;
    f.slot[i] = static_cast<std::uint32_t>(link_flows_[f.links[i]].size());
    link_flows_[f.links[i]].push_back(id);
    carried_[f.links[i]] += spec.delivered > 0 ? spec.delivered : spec.bytes;
  }
  if (alone(f)) {
    // Fast path, same result as rebalance(): a flow alone on its links runs at the smaller
    // capacity and changes no other flow.
    double rate = f.cap;
    for (LinkId l : f.links) {
      if (l != kNone && capacity_[l] < rate) rate = capacity_[l];
    }
    f.rate = rate;
    f.finish = now + Time::ps_rounded(f.remaining / f.rate);
    ++f.version;
    changed_.clear();
    changed_.push_back(id);
    return id;
  }
  rebalance(f.links[0], f.links[1], now);
  return id;
}

void FlowNetwork::detach(FlowId id) {
  const Flow& f = flows_[id];
  for (int i = 0; i < 2; ++i) {
    const LinkId l = f.links[i];
    if (l == kNone) continue;
    auto& list = link_flows_[l];
    const std::uint32_t pos = f.slot[i];
    const FlowId moved = list.back();
    list[pos] = moved;
    list.pop_back();
    if (moved == id) continue;
    Flow& m = flows_[moved];
    for (int j = 0; j < 2; ++j) {
      if (m.links[j] == l) m.slot[j] = pos;
    }
  }
}

void FlowNetwork::finish(FlowId id, Time now) {
  Flow& f = flows_[id];
  assert(f.active);
  detach(id);
  f.active = false;
  f.remaining = 0;
  ++f.version;
  --active_count_;
  free_.push_back(id);
  if (links_idle(f)) {
    changed_.clear();  // nothing else was on its links: no rate changes
    return;
  }
  rebalance(f.links[0], f.links[1], now);
}

std::span<const FlowId> FlowNetwork::take_changed() {
  // The caller consumes the span before the next start()/finish(); clear lazily.
  std::span<const FlowId> out(changed_);
  return out;
}

void FlowNetwork::rebalance(LinkId seed_a, LinkId seed_b, Time now) {
  changed_.clear();
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  auto visit_link = [&](LinkId l) {
    if (l == kNone || link_mark_[l] == epoch_) return;
    link_mark_[l] = epoch_;
    comp_links_.push_back(l);
  };
  visit_link(seed_a);
  visit_link(seed_b);
  // Breadth-first over links connected through active flows.
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    for (FlowId fid : link_flows_[comp_links_[i]]) {
      if (flow_mark_[fid] == epoch_) continue;
      flow_mark_[fid] = epoch_;
      comp_flows_.push_back(fid);
      visit_link(flows_[fid].links[0]);
      visit_link(flows_[fid].links[1]);
    }
  }
  // Bring every affected flow's remaining bytes up to `now` at its old rate.
  for (FlowId fid : comp_flows_) {
    Flow& f = flows_[fid];
    if (f.rate > 0) {
      f.remaining -= f.rate * static_cast<double>((now - f.last_update).picoseconds());
      if (f.remaining < 0) f.remaining = 0;
    }
    f.last_update = now;
  }
  // Progressive filling: repeatedly saturate the link with the smallest fair share.
  for (LinkId l : comp_links_) {
    cap_left_[l] = capacity_[l];
    unfixed_[l] = static_cast<std::uint32_t>(link_flows_[l].size());
  }
  capped_.clear();
  for (FlowId fid : comp_flows_) {
    if (std::isfinite(flows_[fid].cap)) capped_.push_back(fid);
  }
  std::sort(capped_.begin(), capped_.end(), [&](FlowId a, FlowId b) {
    return flows_[a].cap < flows_[b].cap || (flows_[a].cap == flows_[b].cap && a < b);
  });
  std::size_t next_capped = 0;
  std::size_t fixed = 0;
  std::vector<double>& cap = cap_left_;
  auto fix = [&](FlowId fid, double rate) {
    flow_fixed_[fid] = epoch_;
    ++fixed;
    Flow& f = flows_[fid];
    const double old_rate = f.rate;
    f.rate = rate;
    for (LinkId l : f.links) {
      if (l == kNone) continue;
      cap[l] -= rate;
      --unfixed_[l];
    }
    if (f.rate != old_rate) {
      // Nearest picosecond: the fluid model is exact up to half a picosecond per change.
      f.finish = now + Time::ps_rounded(f.remaining / f.rate);
      ++f.version;
      changed_.push_back(fid);
    }
  };
  while (fixed < comp_flows_.size()) {
    LinkId best = kNone;
    double best_share = std::numeric_limits<double>::infinity();
    for (LinkId l : comp_links_) {
      if (unfixed_[l] == 0) continue;
      double share = (cap[l] > 0 ? cap[l] : 0) / unfixed_[l];
      if (share < best_share) {
        best_share = share;
        best = l;
      }
    }
    while (next_capped < capped_.size() && flow_fixed_[capped_[next_capped]] == epoch_) {
      ++next_capped;
    }
    if (next_capped < capped_.size() && flows_[capped_[next_capped]].cap <= best_share) {
      fix(capped_[next_capped], flows_[capped_[next_capped]].cap);  // held back by its own cap
      continue;
    }
    assert(best != kNone);
    for (FlowId fid : link_flows_[best]) {
      if (flow_fixed_[fid] != epoch_) fix(fid, best_share);
    }
  }
}

}  // namespace parasim::sim
