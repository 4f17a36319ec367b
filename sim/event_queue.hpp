#pragma once
// parasim::sim::EventQueue — the future event set.
//
// Total, deterministic order: (time, priority, insertion sequence). Events are small PODs kept in
// one std::vector used as a binary heap, so the hot path allocates nothing once the vector has
// grown to its working size (reserve() it up front when the size is known).

#include <cstdint>
#include <vector>

#include "sim/time.hpp"

namespace parasim::sim {

struct Event {
  Time time;
  std::uint64_t order = 0;     // priority (high 20 bits), then insertion sequence (low 44 bits)
  std::uint32_t type = 0;      // meaning chosen by the engine
  std::uint32_t a = 0;         // payload
  std::uint32_t b = 0;         // payload
  std::uint32_t priority() const { return static_cast<std::uint32_t>(order >> 44); }
  std::uint64_t sequence() const { return order & ((std::uint64_t{1} << 44) - 1); }
};

class EventQueue {
 public:
  void reserve(std::size_t n) { heap_.reserve(n); }
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  std::uint64_t pushed() const { return next_sequence_; }

  void push(Time time, std::uint32_t priority, std::uint32_t type, std::uint32_t a,
            std::uint32_t b = 0) {
    heap_.push_back(Event{time, (std::uint64_t{priority} << 44) | next_sequence_++, type, a, b});
    sift_up(heap_.size() - 1);
  }

  const Event& top() const { return heap_.front(); }

  Event pop() {
    Event out = heap_.front();
    heap_.front() = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(0);
    return out;
  }

 private:
  static bool before(const Event& x, const Event& y) {
    if (x.time != y.time) return x.time < y.time;
    return x.order < y.order;
  }
  void sift_up(std::size_t i) {
    Event e = heap_[i];
    while (i > 0) {
      std::size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void sift_down(std::size_t i) {
    Event e = heap_[i];
    const std::size_t n = heap_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], e)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = e;
  }

  std::vector<Event> heap_;
  std::uint64_t next_sequence_ = 0;
};

}  // namespace parasim::sim
