#pragma once
// parasim::sim::FlowNetwork — flow-level (fluid) bandwidth sharing on links.
//
// Each active flow crosses one or two links and has bytes left to move. Rates are the max-min fair
// allocation (progressive filling, Bertsekas & Gallager, "Data Networks", 6.5.2; the model SimGrid
// uses): every flow gets the same share of a link unless it is held back by another link, and no
// link carries more than its capacity. Rates change only when a flow starts or ends, and only the
// flows connected to it through shared links are re-solved.
//
// A flow may carry its own rate cap (FlowSpec::max_bytes_per_s): progressive filling then fixes
// it at the cap as soon as the smallest fair share exceeds it, leaving the rest of its links to
// the others (max-min fairness with demand limits, Bertsekas & Gallager 6.5.2).
//
// Invariants: a flow's rate is > 0 while it is active and never above its cap; the sum of rates
// on a link never exceeds its capacity (up to rounding); finish times are rounded to the nearest
// picosecond.

#include <cstdint>
#include <span>
#include <vector>

#include "sim/time.hpp"
#include "sim/workload.hpp"

namespace parasim::sim {

using FlowId = std::uint32_t;

class FlowNetwork {
 public:
  explicit FlowNetwork(std::span<const Link> links);

  // Starts a flow at `now`; returns its id. Call take_changed() afterwards for the flows whose
  // finish time moved (the new one included).
  FlowId start(const FlowSpec& spec, Time now, std::uint32_t owner);
  // Ends a flow (its finish event fired) and re-solves the flows that shared a link with it.
  void finish(FlowId flow, Time now);

  // Flows whose finish time changed since the last call; each has a fresh version().
  std::span<const FlowId> take_changed();

  Time finish_time(FlowId f) const { return flows_[f].finish; }
  std::uint32_t version(FlowId f) const { return flows_[f].version; }
  std::uint32_t owner(FlowId f) const { return flows_[f].owner; }
  bool active(FlowId f) const { return flows_[f].active; }
  double rate_bytes_per_s(FlowId f) const { return flows_[f].rate * 1e12; }
  std::size_t active_count() const { return active_count_; }

  // Traffic per link so far, FlowSpec::delivered (for the report's traffic by link).
  const std::vector<double>& bytes_carried() const { return carried_; }

 private:
  struct Flow {
    LinkId links[2];
    std::uint32_t slot[2];   // position in link_flows_[links[i]]
    double remaining = 0;    // bytes
    double rate = 0;         // bytes per picosecond
    double cap = 0;          // bytes per picosecond; infinity when uncapped
    Time last_update;
    Time finish;
    std::uint32_t version = 0;
    std::uint32_t owner = 0;
    bool active = false;
  };

  void rebalance(LinkId seed_a, LinkId seed_b, Time now);
  // Whether `f` is the only active flow on each of its links.
  bool alone(const Flow& f) const {
    return (f.links[0] == kNone || link_flows_[f.links[0]].size() == 1) &&
           (f.links[1] == kNone || link_flows_[f.links[1]].size() == 1);
  }
  // Whether no active flow is left on `f`'s links (after detach).
  bool links_idle(const Flow& f) const {
    return (f.links[0] == kNone || link_flows_[f.links[0]].empty()) &&
           (f.links[1] == kNone || link_flows_[f.links[1]].empty());
  }
  void detach(FlowId f);

  std::vector<double> capacity_;                 // bytes per picosecond
  std::vector<std::vector<FlowId>> link_flows_;  // active flows per link
  std::vector<Flow> flows_;
  std::vector<FlowId> free_;
  std::vector<FlowId> changed_;
  std::vector<double> carried_;
  std::size_t active_count_ = 0;

  // Scratch for rebalance (kept to avoid allocation per event).
  std::vector<LinkId> comp_links_;
  std::vector<FlowId> comp_flows_;
  std::vector<std::uint32_t> link_mark_;
  std::vector<std::uint32_t> flow_mark_;
  std::vector<std::uint32_t> flow_fixed_;
  std::vector<double> cap_left_;
  std::vector<FlowId> capped_;  // the component's capped flows, smallest cap first
  std::vector<std::uint32_t> unfixed_;
  std::uint32_t epoch_ = 0;
};

}  // namespace parasim::sim
