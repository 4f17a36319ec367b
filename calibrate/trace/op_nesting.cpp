#include "calibrate/trace/op_nesting.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "calibrate/trace/kernel_classes.hpp"

namespace parasim::calib::trace {
namespace {

std::optional<TracePhase> phase_marker(std::string_view name) {
  if (name.rfind("autograd::engine::evaluate_function", 0) == 0 ||
      name.find("Backward") != std::string_view::npos) {
    return TracePhase::kBackward;
  }
  if (name.rfind("Optimizer.step", 0) == 0 || name.rfind("Optimizer.zero_grad", 0) == 0) {
    return TracePhase::kOptimizer;
  }
  return std::nullopt;
}

bool is_profiler_step(std::string_view name) {
  return name.rfind("ProfilerStep#", 0) == 0;
}

// Op indices per thread in nesting order: by start, the longer first when two start together.
std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> ops_by_thread(
    const std::vector<TraceOp>& ops) {
  std::vector<std::int64_t> order(ops.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const TraceOp& x = ops[static_cast<std::size_t>(a)];
    const TraceOp& y = ops[static_cast<std::size_t>(b)];
    return std::tuple(x.thread, x.start_us, -x.end_us, a) <
           std::tuple(y.thread, y.start_us, -y.end_us, b);
  });
  std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> out;
  for (const std::int64_t i : order) {
    const std::int64_t t = ops[static_cast<std::size_t>(i)].thread;
    if (out.empty() || out.back().first != t) out.push_back({t, {}});
    out.back().second.push_back(i);
  }
  return out;
}

}  // namespace

OpLocator::OpLocator(const std::vector<TraceOp>& ops) {
  for (const auto& [thread, order] : ops_by_thread(ops)) {
    std::vector<Span> spans;
    std::vector<std::int64_t> open;  // the spans enclosing the current one, innermost last
    for (const std::int64_t i : order) {
      const TraceOp& op = ops[static_cast<std::size_t>(i)];
      while (!open.empty() && spans[static_cast<std::size_t>(open.back())].end_us <= op.start_us) {
        open.pop_back();
      }
      spans.push_back({op.start_us, op.end_us, i, open.empty() ? -1 : open.back()});
      open.push_back(static_cast<std::int64_t>(spans.size()) - 1);
    }
    threads_.emplace_back(thread, std::move(spans));
  }
}

std::int64_t OpLocator::innermost(std::int64_t thread, double time_us) const {
  const auto t =
      std::lower_bound(threads_.begin(), threads_.end(), thread,
                       [](const auto& entry, std::int64_t th) { return entry.first < th; });
  if (t == threads_.end() || t->first != thread) return -1;
  const std::vector<Span>& spans = t->second;
  // The last span starting at or before the time, then up its chain of enclosing spans until one
  // holds the time: every span that starts earlier and still holds it is on that chain.
  const auto it = std::upper_bound(spans.begin(), spans.end(), time_us,
                                   [](double time, const Span& s) { return time < s.start_us; });
  if (it == spans.begin()) return -1;
  std::int64_t at = static_cast<std::int64_t>(it - spans.begin()) - 1;
  while (at >= 0) {
    const Span& s = spans[static_cast<std::size_t>(at)];
    if (s.end_us >= time_us) return s.op;
    at = s.parent;
  }
  return -1;
}

void finish_rank_trace(RankTrace& trace) {
  std::vector<TraceOp>& ops = trace.ops;
  // Phases: the outermost marker on the stack of enclosing ops.
  std::vector<std::pair<double, double>> steps;  // CPU spans of ProfilerStep#N
  for (const auto& entry : ops_by_thread(ops)) {
    std::vector<std::pair<double, TracePhase>> stack;  // (end, phase of that level)
    for (const std::int64_t i : entry.second) {
      TraceOp& op = ops[static_cast<std::size_t>(i)];
      while (!stack.empty() && stack.back().first <= op.start_us) stack.pop_back();
      const TracePhase inherited = stack.empty() ? TracePhase::kForward : stack.back().second;
      const bool inside_marker = std::any_of(stack.begin(), stack.end(), [](const auto& s) {
        return s.second != TracePhase::kForward;
      });
      const std::optional<TracePhase> marker = phase_marker(op.name);
      op.phase = inside_marker || !marker ? inherited : *marker;
      stack.emplace_back(op.end_us, op.phase);
      if (is_profiler_step(op.name)) steps.emplace_back(op.start_us, op.end_us);
    }
  }
  std::sort(steps.begin(), steps.end());
  trace.steps = static_cast<int>(steps.size());
  double longest_step = 0;
  for (const auto& st : steps) longest_step = std::max(longest_step, st.second - st.first);
  auto in_steps = [&](double t) {
    auto it = std::upper_bound(steps.begin(), steps.end(), std::pair(t, 1e300));
    return it != steps.begin() && std::prev(it)->second >= t;
  };
  std::vector<TraceKernel> kept;
  kept.reserve(trace.kernels.size());
  for (TraceKernel& k : trace.kernels) {
    const TraceOp* launcher =
        k.launch_op >= 0 ? &ops[static_cast<std::size_t>(k.launch_op)] : nullptr;
    if (launcher) {
      k.phase = launcher->phase;
      k.kind = classify_launched_kernel(k.kind, launcher->name);
    }
    if (!steps.empty()) {
      // A kernel belongs to the step in which its launching op started; one without a known
      // launcher, to the steps' span on the GPU: from the first step's start (a kernel can only
      // run after its launch) to the last step's end plus the longest step (the GPU may run that
      // far behind the host).
      const bool keep = launcher ? in_steps(launcher->start_us)
                                 : k.start_us >= steps.front().first &&
                                       k.start_us <= steps.back().second + longest_step;
      if (!keep) continue;
    }
    kept.push_back(std::move(k));
  }
  std::sort(kept.begin(), kept.end(), [](const TraceKernel& a, const TraceKernel& b) {
    return std::tie(a.start_us, a.stream, a.name) < std::tie(b.start_us, b.stream, b.name);
  });
  trace.kernels = std::move(kept);
}

}  // namespace parasim::calib::trace
