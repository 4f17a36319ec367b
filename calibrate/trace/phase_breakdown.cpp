#include "calibrate/trace/phase_breakdown.hpp"

#include <algorithm>
#include <stdexcept>

namespace parasim::calib::trace {
namespace {

using Spans = std::vector<std::pair<double, double>>;

// Sorted, disjoint union of spans.
Spans merged(Spans spans) {
  std::sort(spans.begin(), spans.end());
  Spans out;
  for (const auto& s : spans) {
    if (s.second <= s.first) continue;
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
}

double length(const Spans& disjoint) {
  double total = 0;
  for (const auto& s : disjoint) total += s.second - s.first;
  return total;
}

// Length of the intersection of two sorted disjoint unions.
double overlap(const Spans& a, const Spans& b) {
  double total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first);
    const double hi = std::min(a[i].second, b[j].second);
    if (hi > lo) total += hi - lo;
    if (a[i].second < b[j].second) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

}  // namespace

PhaseBreakdown phase_breakdown(std::vector<TimedWork> work, int steps) {
  if (steps < 1) throw std::invalid_argument("phase_breakdown: steps must be >= 1");
  PhaseBreakdown out;
  out.steps = steps;
  if (work.empty()) return out;
  double first = work.front().begin_us, last = work.front().end_us;
  Spans compute, communication;
  std::array<Spans, kTracePhases> by_phase;
  for (const TimedWork& w : work) {
    first = std::min(first, w.begin_us);
    last = std::max(last, w.end_us);
    if (w.communication) {
      communication.emplace_back(w.begin_us, w.end_us);
    } else {
      compute.emplace_back(w.begin_us, w.end_us);
      by_phase[static_cast<std::size_t>(w.phase)].emplace_back(w.begin_us, w.end_us);
    }
  }
  const Spans c = merged(std::move(compute));
  const Spans n = merged(std::move(communication));
  const double per_step = 1.0 / steps;
  out.window_us = (last - first) * per_step;
  out.compute_us = length(c) * per_step;
  out.communication_us = length(n) * per_step;
  out.exposed_comm_us = (length(n) - overlap(c, n)) * per_step;
  out.idle_us = std::max(0.0, out.window_us - out.compute_us - out.exposed_comm_us);
  for (std::size_t p = 0; p < by_phase.size(); ++p) {
    out.phase_us[p] = length(merged(std::move(by_phase[p]))) * per_step;
  }
  return out;
}

PhaseBreakdown trace_phases(const RankTrace& rank) {
  std::vector<TimedWork> work;
  work.reserve(rank.kernels.size());
  for (const TraceKernel& k : rank.kernels) {
    work.push_back({k.start_us, k.end_us(), k.kind == KernelClass::kCollective, k.phase});
  }
  return phase_breakdown(std::move(work), std::max(1, rank.steps));
}

}  // namespace parasim::calib::trace
