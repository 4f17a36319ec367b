#pragma once
// parasim::plan HostGpu — the screen's view of one device's host thread and GPU compute stream
// running a sequence of steps, exactly as the engine runs them when nothing else contends
// (sim/workload.hpp, "Host issue"; strategies/workload/host_emission.cpp issues every GPU op from a host
// op): the state is (h, g), the host's time and the GPU's, and each piece of work maps it by
// max and + only, so a sequence is one 2 x 2 max-plus matrix (Baccelli et al., Synchronization
// and Linearity, 1992, ch. 3) and L identical layers are its L-th power:
//
//   a GPU op of duration d whose host step costs `total`, its first kernel issued after `first`
//   and its last kernel's body `last_body` (host_plan.hpp's StepHost; a collective: first = total,
//   last_body = 0):   h' = h + total,   g' = max(g + d, h + first + d, h + total + last_body)
//   host work t:      h' = h + t,       g' = g
//   n syncs:          h' = max(h, g) + n x sync (the drain, then the syncs' cost),  g' = g
//
// The time of a sequence from an idle device (h = g = 0) is max(h', g'): the pass's
// max(GPU time, host time) with the drains its syncs force. Units: seconds.

#include <algorithm>
#include <limits>

namespace parasim::plan {

class HostGpu {
 public:
  static constexpr double kNone = -std::numeric_limits<double>::infinity();

  // The identity (nothing runs).
  HostGpu() = default;
  static HostGpu gpu_op(double duration, double host_first, double host_total, double last_body) {
    HostGpu m;
    m.hh_ = host_total;
    m.gh_ = std::max(host_first + duration, host_total + last_body);
    m.gg_ = duration;
    return m;
  }
  static HostGpu host_work(double t) {
    HostGpu m;
    m.hh_ = t;
    return m;
  }
  static HostGpu syncs(int count, double sync) {
    HostGpu m;
    if (count <= 0) return m;
    m.hh_ = m.hg_ = count * sync;
    return m;
  }

  // This, then `next`.
  HostGpu then(const HostGpu& next) const {
    HostGpu r;
    r.hh_ = std::max(next.hh_ + hh_, next.hg_ + gh_);
    r.hg_ = std::max(next.hh_ + hg_, next.hg_ + gg_);
    r.gh_ = std::max(next.gh_ + hh_, next.gg_ + gh_);
    r.gg_ = std::max(next.gh_ + hg_, next.gg_ + gg_);
    return r;
  }
  // This `n` times in a row (n >= 0), by squaring.
  HostGpu power(int n) const {
    HostGpu result, base = *this;
    for (; n > 0; n >>= 1) {
      if (n & 1) result = result.then(base);
      base = base.then(base);
    }
    return result;
  }

  // From an idle device: the host's and the GPU's end, and the sequence's time.
  double host_end() const { return std::max(hh_, hg_); }
  double gpu_end() const { return std::max(gh_, gg_); }
  double time() const { return std::max(host_end(), gpu_end()); }

 private:
  // h' = max(h + hh, g + hg), g' = max(h + gh, g + gg).
  double hh_ = 0, hg_ = kNone, gh_ = kNone, gg_ = 0;
};

}  // namespace parasim::plan
