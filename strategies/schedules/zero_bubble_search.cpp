#include "strategies/schedules/zero_bubble_search.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace parasim::strat {
namespace {

constexpr int kF = 0, kB = 1, kW = 2;
constexpr ItemKind kKinds[3] = {ItemKind::kForward, ItemKind::kBackward, ItemKind::kWeightGrad};

// One variant of the heuristic (header): the placement state of every stage and the rules.
class OrderPlanner {
 public:
  OrderPlanner(const ZeroBubbleInput& in, bool allow_bubble, bool prioritise_b, bool fill_gaps)
      : in_(in),
        p_(static_cast<int>(in.forward.size())),
        m_(in.micro_batches),
        allow_bubble_(allow_bubble),
        prioritise_b_(prioritise_b),
        fill_gaps_(fill_gaps) {
    for (auto& c : done_) c.assign(static_cast<std::size_t>(p_), 0);
    for (auto& e : pass_end_) {
      e.assign(static_cast<std::size_t>(p_), std::vector<sim::Time>(static_cast<std::size_t>(m_)));
    }
    busy_until_.assign(static_cast<std::size_t>(p_), sim::Time::zero());
    idle_.assign(static_cast<std::size_t>(p_), sim::Time::zero());
    bytes_.assign(static_cast<std::size_t>(p_), 0.0);
    out_.stages.resize(static_cast<std::size_t>(p_));
    out_.ends.resize(static_cast<std::size_t>(p_));
    out_.peak_bytes.assign(static_cast<std::size_t>(p_), 0.0);
    out_.allow_bubble_before_first_backward = allow_bubble;
    out_.prioritise_backward = prioritise_b;
    out_.fill_small_gaps = fill_gaps;
  }

  std::optional<ZeroBubbleOrder> run() {
    warm_up();
    for (int i = 1; i < m_ && ok_; ++i) steady_round(i);
    for (int j = 0; j < p_ && ok_; ++j) {
      while (count(kW, j) < m_) place(j, kW);
    }
    if (!ok_) return std::nullopt;
    for (int j = 0; j < p_; ++j) {
      const sim::Time first_start = end_of(kF, j, 0) - cost(kF, j);
      out_.longest_stage = sim::max(out_.longest_stage, end_of(kW, j, m_ - 1) - first_start);
    }
    return std::move(out_);
  }

 private:
  sim::Time cost(int type, int j) const {
    const auto& v = type == kF ? in_.forward : type == kB ? in_.backward : in_.weight_grad;
    return v[static_cast<std::size_t>(j)];
  }
  double bytes(int type, int j) const {
    const auto& v = type == kF   ? in_.forward_bytes
                    : type == kB ? in_.backward_bytes
                                 : in_.weight_grad_bytes;
    return v[static_cast<std::size_t>(j)];
  }
  int& count(int type, int j) {
    return done_[static_cast<std::size_t>(type)][static_cast<std::size_t>(j)];
  }
  sim::Time end_of(int type, int j, int mb) const {
    return pass_end_[static_cast<std::size_t>(type)][static_cast<std::size_t>(j)]
                    [static_cast<std::size_t>(mb)];
  }
  sim::Time& busy(int j) { return busy_until_[static_cast<std::size_t>(j)]; }
  double& held(int j) { return bytes_[static_cast<std::size_t>(j)]; }
  sim::Time largest_idle() const { return *std::max_element(idle_.begin(), idle_.end()); }
  sim::Time allowance(int j) const { return largest_idle() - idle_[static_cast<std::size_t>(j)]; }
  bool fits(int j, int type) { return held(j) + bytes(type, j) <= in_.memory_limit; }

  // Runs the stage's next pass of `type` as early as its inputs allow; the time it waits after
  // its first forward counts as the stage's idle time.
  void place(int j, int type) {
    const int mb = count(type, j);
    const sim::Time unblocked = busy(j) + cost(type, j);
    sim::Time end = unblocked;
    if (type == kF && j > 0) end = sim::max(end, end_of(kF, j - 1, mb) + in_.comm + cost(kF, j));
    if (type == kB && j + 1 < p_) {
      end = sim::max(end, end_of(kB, j + 1, mb) + in_.comm + cost(kB, j));
    }
    if (count(kF, j) > 0) idle_[static_cast<std::size_t>(j)] += end - unblocked;
    busy(j) = end;
    pass_end_[static_cast<std::size_t>(type)][static_cast<std::size_t>(j)]
             [static_cast<std::size_t>(mb)] = end;
    held(j) += bytes(type, j);
    auto& peak = out_.peak_bytes[static_cast<std::size_t>(j)];
    peak = std::max(peak, held(j));
    ++count(type, j);
    out_.stages[static_cast<std::size_t>(j)].push_back({kKinds[type], mb, 0, 0, 0});
    out_.ends[static_cast<std::size_t>(j)].push_back(end);
  }

  // Pending W passes until the next pass of `type` fits; false when none is left to free memory.
  bool make_room(int j, int type) {
    while (!fits(j, type)) {
      if (count(kW, j) >= count(kB, j)) return ok_ = false;
      place(j, kW);
    }
    return true;
  }

  // Fills the wait until `ready` (the stage's input arrives) with pending W passes (header).
  void fill_wait(int j, sim::Time ready) {
    while (count(kW, j) < count(kB, j) && busy(j) + cost(kW, j) <= ready) place(j, kW);
    if (count(kW, j) < count(kB, j) && busy(j) < ready) {
      if (ready - busy(j) > allowance(j) || fill_gaps_) place(j, kW);
    }
  }

  void warm_up() {
    for (int j = 0; j < p_; ++j) place(j, kF);
    std::vector<int> extra(static_cast<std::size_t>(p_), 0);
    // When micro-batch 0's backward ends on the stage after j.
    sim::Time b_end = end_of(kF, p_ - 1, 0) + cost(kB, p_ - 1);
    for (int j = p_ - 2; j >= 0; --j) {
      int& n = extra[static_cast<std::size_t>(j)];
      double held_bytes = held(j);
      sim::Time t = busy(j);
      while (count(kF, j) + n < m_ && held_bytes + bytes(kF, j) <= in_.memory_limit) {
        if (allow_bubble_ ? t + cost(kF, j) > b_end + in_.comm : t >= b_end + in_.comm) break;
        held_bytes += bytes(kF, j);
        t += cost(kF, j);
        ++n;
      }
      b_end = sim::max(t, b_end + in_.comm) + cost(kB, j);
    }
    for (int j = 1; j < p_; ++j) {
      int& n = extra[static_cast<std::size_t>(j)];
      const int before = extra[static_cast<std::size_t>(j - 1)];
      while (n > 0 && n >= before && count(kF, j) + n < m_) --n;
      // Never more than the stage before has run (the implementation's exception above lets a
      // stage that would run all its forwards keep them, even ones its input has not produced).
      n = std::min(n, before);
    }
    for (int j = 0; j < p_; ++j) {
      for (int k = 0; k < extra[static_cast<std::size_t>(j)]; ++k) place(j, kF);
    }
    for (int j = p_ - 1; j >= 0; --j) place(j, kB);
  }

  // Whether stage j runs a forward this round (before the later stages' veto).
  bool wants_forward(int j) {
    if (count(kF, j) >= m_) return false;
    if (!prioritise_b_ || j + 1 >= p_ || count(kF, j) < count(kF, j + 1) + 2) return true;
    // j is two forwards ahead: the next stage's F and B would end here.
    const sim::Time next_ready = busy(j + 1) + cost(kF, j + 1) + cost(kB, j + 1) + in_.comm;
    if (busy(j) >= next_ready) return false;
    sim::Time w_cost;
    double held_bytes = held(j) + bytes(kF, j);
    for (int w = count(kW, j); held_bytes > in_.memory_limit && w < count(kB, j); ++w) {
      w_cost += cost(kW, j);
      held_bytes += bytes(kW, j);
    }
    if (busy(j) + cost(kF, j) + w_cost <= next_ready) return true;
    return next_ready - busy(j) > allowance(j);
  }

  void steady_round(int i) {
    std::vector<int> run_f(static_cast<std::size_t>(p_));
    for (int j = 0; j < p_; ++j) run_f[static_cast<std::size_t>(j)] = wants_forward(j) ? 1 : 0;
    for (int j = p_ - 2; j >= 0; --j) {
      auto& r = run_f[static_cast<std::size_t>(j)];
      r = std::min(r, run_f[static_cast<std::size_t>(j + 1)]);
    }
    for (int j = 0; j < p_ && ok_; ++j) {
      if (run_f[static_cast<std::size_t>(j)] == 0) continue;
      if (!make_room(j, kF)) return;
      if (j > 0) fill_wait(j, end_of(kF, j - 1, count(kF, j)) + in_.comm);
      place(j, kF);
    }
    for (int j = p_ - 1; j >= 0 && ok_; --j) {
      if (!make_room(j, kB)) return;
      if (j + 1 < p_) fill_wait(j, end_of(kB, j + 1, i) + in_.comm);
      if (j == 0 && count(kF, 0) == m_) {
        while (count(kW, 0) < count(kB, 0)) place(0, kW);
      }
      place(j, kB);
    }
  }

  const ZeroBubbleInput& in_;
  int p_, m_;
  bool allow_bubble_, prioritise_b_, fill_gaps_;
  bool ok_ = true;
  std::array<std::vector<int>, 3> done_;                         // passes placed
  std::array<std::vector<std::vector<sim::Time>>, 3> pass_end_;  // [type][stage][mb]
  std::vector<sim::Time> busy_until_, idle_;
  std::vector<double> bytes_;
  ZeroBubbleOrder out_;
};

void check_input(const ZeroBubbleInput& in) {
  const std::size_t p = in.forward.size();
  if (p == 0 || in.micro_batches < 1) {
    throw std::invalid_argument("zero-bubble search: needs at least one stage and micro-batch");
  }
  for (std::size_t n : {in.backward.size(), in.weight_grad.size(), in.forward_bytes.size(),
                        in.backward_bytes.size(), in.weight_grad_bytes.size()}) {
    if (n != p) throw std::invalid_argument("zero-bubble search: per-stage sizes differ");
  }
}

}  // namespace

std::optional<ZeroBubbleOrder> zero_bubble_order(const ZeroBubbleInput& input,
                                                 bool allow_bubble_before_first_backward,
                                                 bool prioritise_backward, bool fill_small_gaps) {
  check_input(input);
  return OrderPlanner(input, allow_bubble_before_first_backward, prioritise_backward,
                      fill_small_gaps)
      .run();
}

std::optional<ZeroBubbleOrder> search_zero_bubble_order(const ZeroBubbleInput& input) {
  check_input(input);
  std::optional<ZeroBubbleOrder> best;
  for (bool a : {true, false}) {
    for (bool p : {true, false}) {
      for (bool g : {true, false}) {
        auto order = OrderPlanner(input, a, p, g).run();
        if (order && (!best || order->longest_stage < best->longest_stage)) best = std::move(order);
      }
    }
  }
  return best;
}

}  // namespace parasim::strat
