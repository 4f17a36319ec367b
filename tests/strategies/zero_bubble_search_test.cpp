// The zero-bubble order search (Qi et al. 2024, arXiv 2401.10241, sec. 3.1) against the paper's
// analysis on equal stages, T_F = T_B = T_W = 1 and free communication: ZB-2p (2p micro-batches of
// memory) leaves no bubble for m >= 2p, as ZB-H2's (P-1)(T_F + T_B - 2T_W) = 0; ZB-1p (p
// micro-batches, 1F1B's memory) leaves ZB-H1's (P-1)(T_F + T_B - T_W) = P-1. Every order is valid
// (each micro-batch's F before its B before its W on a stage, inputs from the neighbours respected
// in the search's own timeline) and keeps within its memory limit.
#include <doctest/doctest.h>

#include <map>

#include "strategies/schedules/zero_bubble_search.hpp"

using namespace parasim;
using strat::ItemKind;
using sim::Time;

namespace {

// p equal stages, unit times (1 us each pass), a forward keeping one unit of memory that the
// backward keeps and the W frees (parasim's accounting: B frees nothing of the layers'), the
// limit `multiple` x p units.
strat::ZeroBubbleInput unit_stages(int p, int m, int multiple, Time comm = Time::zero()) {
  strat::ZeroBubbleInput in;
  const auto n = static_cast<std::size_t>(p);
  in.forward.assign(n, Time::us(1));
  in.backward.assign(n, Time::us(1));
  in.weight_grad.assign(n, Time::us(1));
  in.comm = comm;
  in.forward_bytes.assign(n, 1.0);
  in.backward_bytes.assign(n, 0.0);
  in.weight_grad_bytes.assign(n, -1.0);
  in.memory_limit = multiple * p;
  in.micro_batches = m;
  return in;
}

// Checks the order of every stage: each pass of each micro-batch exactly once, F < B < W on the
// stage, the search's timeline consistent with the passes' costs and the neighbours' outputs,
// the running memory within the limit.
void check_valid(const strat::ZeroBubbleInput& in, const strat::ZeroBubbleOrder& o) {
  const int p = static_cast<int>(in.forward.size());
  const int m = in.micro_batches;
  REQUIRE(o.stages.size() == static_cast<std::size_t>(p));
  // end[kind][stage][mb]
  std::map<std::tuple<ItemKind, int, int>, Time> end;
  for (int s = 0; s < p; ++s) {
    CAPTURE(s);
    const auto& items = o.stages[static_cast<std::size_t>(s)];
    REQUIRE(items.size() == static_cast<std::size_t>(3 * m));
    std::map<std::pair<ItemKind, int>, std::size_t> position;
    double held = 0;
    Time previous_end;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const auto& it = items[i];
      CHECK(position.emplace(std::make_pair(it.kind, it.micro_batch), i).second);
      const auto k = static_cast<std::size_t>(s);
      const Time cost = it.kind == ItemKind::kForward    ? in.forward[k]
                        : it.kind == ItemKind::kBackward ? in.backward[k]
                                                         : in.weight_grad[k];
      const Time e = o.ends[k][i];
      CHECK(e - cost >= previous_end);  // one pass at a time
      previous_end = e;
      end[{it.kind, s, it.micro_batch}] = e;
      held += it.kind == ItemKind::kForward    ? in.forward_bytes[k]
              : it.kind == ItemKind::kBackward ? in.backward_bytes[k]
                                               : in.weight_grad_bytes[k];
      CHECK(held <= in.memory_limit);
    }
    CHECK(o.peak_bytes[static_cast<std::size_t>(s)] <= in.memory_limit);
    for (int mb = 0; mb < m; ++mb) {
      CAPTURE(mb);
      CHECK(position.at({ItemKind::kForward, mb}) < position.at({ItemKind::kBackward, mb}));
      CHECK(position.at({ItemKind::kBackward, mb}) < position.at({ItemKind::kWeightGrad, mb}));
    }
  }
  for (int s = 0; s < p; ++s) {
    const auto k = static_cast<std::size_t>(s);
    for (int mb = 0; mb < m; ++mb) {
      if (s > 0) {
        CHECK(end.at({ItemKind::kForward, s, mb}) - in.forward[k] >=
              end.at({ItemKind::kForward, s - 1, mb}) + in.comm);
      }
      if (s + 1 < p) {
        CHECK(end.at({ItemKind::kBackward, s, mb}) - in.backward[k] >=
              end.at({ItemKind::kBackward, s + 1, mb}) + in.comm);
      } else {
        CHECK(end.at({ItemKind::kBackward, s, mb}) - in.backward[k] >=
              end.at({ItemKind::kForward, s, mb}));
      }
    }
  }
}

}  // namespace

TEST_CASE("ZB-2p on equal unit stages: no bubble for m >= 2p, within 2p micro-batches") {
  for (int p : {2, 4, 8, 16}) {
    for (int m : {2 * p, 3 * p, 4 * p + 1}) {
      CAPTURE(p);
      CAPTURE(m);
      const auto in = unit_stages(p, m, 2);
      const auto o = strat::search_zero_bubble_order(in);
      REQUIRE(o.has_value());
      check_valid(in, *o);
      CHECK(o->longest_stage == Time::us(3 * m));
    }
  }
}

TEST_CASE("ZB-1p on equal unit stages: ZB-H1's bubble P-1, within p micro-batches") {
  for (int p : {2, 4, 8, 16}) {
    for (int m : {p, 2 * p, 3 * p}) {
      CAPTURE(p);
      CAPTURE(m);
      const auto in = unit_stages(p, m, 1);
      const auto o = strat::search_zero_bubble_order(in);
      REQUIRE(o.has_value());
      check_valid(in, *o);
      CHECK(o->longest_stage == Time::us(3 * m + (p - 1)));
    }
  }
}

TEST_CASE("Every variant of the search gives a valid order, with transfers and unequal stages") {
  auto in = unit_stages(6, 20, 2, Time::ns(300));
  in.forward[0] = Time::ns(700);   // a lighter first stage
  in.backward[5] = Time::ns(1600);  // a heavier last one
  in.forward_bytes[5] = 1.5;
  in.weight_grad_bytes[5] = -1.5;
  for (bool a : {true, false}) {
    for (bool b : {true, false}) {
      for (bool g : {true, false}) {
        CAPTURE(a);
        CAPTURE(b);
        CAPTURE(g);
        const auto o = strat::zero_bubble_order(in, a, b, g);
        REQUIRE(o.has_value());
        check_valid(in, *o);
      }
    }
  }
}

TEST_CASE("The search keeps the best variant, and reports when no order fits the memory") {
  const auto in = unit_stages(8, 24, 1, Time::ns(100));
  const auto best = strat::search_zero_bubble_order(in);
  REQUIRE(best.has_value());
  for (bool a : {true, false}) {
    for (bool b : {true, false}) {
      for (bool g : {true, false}) {
        const auto o = strat::zero_bubble_order(in, a, b, g);
        if (o) CHECK(best->longest_stage <= o->longest_stage);
      }
    }
  }
  auto tight = unit_stages(4, 8, 1);
  tight.memory_limit = 0.5;  // not even one micro-batch's activations
  CHECK_FALSE(strat::search_zero_bubble_order(tight).has_value());
  tight.forward.pop_back();
  CHECK_THROWS_AS(strat::search_zero_bubble_order(tight), std::invalid_argument);
}

TEST_CASE("A stage's warm-up never runs forwards its input stage has not run") {
  // A light-memory stage after a heavy one: the implementation's warm-up rule lets stage 1 keep
  // all its forwards (it would finish them) while stage 0 runs fewer, an order that runs
  // forwards before their input exists; the search caps stage 1 at stage 0's count.
  strat::ZeroBubbleInput in;
  in.forward = {Time::ns(1142), Time::ns(1060), Time::ns(989)};
  in.backward = {Time::ns(1211), Time::ns(1776), Time::ns(2093)};
  in.weight_grad = {Time::ns(1628), Time::ns(1190), Time::ns(1623)};
  in.comm = Time::ns(500);
  in.forward_bytes = {4, 2, 3};
  in.backward_bytes = {0, 0, 0};
  in.weight_grad_bytes = {-4, -2, -3};
  in.memory_limit = 12;
  in.micro_batches = 4;
  for (bool a : {true, false}) {
    for (bool b : {true, false}) {
      for (bool g : {true, false}) {
        const auto o = strat::zero_bubble_order(in, a, b, g);
        REQUIRE(o.has_value());
        check_valid(in, *o);
      }
    }
  }
}
