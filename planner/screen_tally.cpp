#include "planner/screen_tally.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace parasim::plan {
namespace {

static_assert(std::is_trivially_copyable_v<Screened>,
              "encode() copies Screened as bytes between ranks of one executable");

// The n best of a list kept as a max-heap by `less`.
template <typename Less>
void push_bounded(std::vector<Screened>& heap, const Screened& s, std::size_t n, Less less) {
  if (n == 0) return;
  if (heap.size() < n) {
    heap.push_back(s);
    std::push_heap(heap.begin(), heap.end(), less);
  } else if (less(s, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), less);
    heap.back() = s;
    std::push_heap(heap.begin(), heap.end(), less);
  }
}

template <typename Less>
void sort_and_trim(std::vector<Screened>& list, std::size_t n, Less less) {
  std::sort(list.begin(), list.end(), less);
  if (list.size() > n) list.resize(n);
}

// "PTAL" and a format number: a tally from another build or a stray message is refused.
constexpr std::uint32_t kMagic = 0x4c415450;
constexpr std::uint32_t kFormat = 1;

class Writer {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto* p = reinterpret_cast<const char*>(&value);
    bytes_.append(p, sizeof(T));
  }
  void put_list(const std::vector<Screened>& list) {
    put<std::uint64_t>(list.size());
    if (!list.empty()) {
      bytes_.append(reinterpret_cast<const char*>(list.data()), list.size() * sizeof(Screened));
    }
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  std::vector<Screened> get_list() {
    const auto n = get<std::uint64_t>();
    if (n > (bytes_.size() - at_) / sizeof(Screened)) fail();
    std::vector<Screened> list(static_cast<std::size_t>(n));
    if (!list.empty()) {  // memcpy's pointers must not be null, even for 0 bytes
      std::memcpy(list.data(), bytes_.data() + at_, list.size() * sizeof(Screened));
    }
    at_ += list.size() * sizeof(Screened);
    return list;
  }
  std::string get_text() {
    const auto n = get<std::uint64_t>();
    need(static_cast<std::size_t>(n));
    std::string text = bytes_.substr(at_, static_cast<std::size_t>(n));
    at_ += text.size();
    return text;
  }
  bool at_end() const { return at_ == bytes_.size(); }
  [[noreturn]] static void fail() {
    throw std::runtime_error("a rank's screen tally is malformed (ranks from different builds?)");
  }

 private:
  void need(std::size_t n) const {
    if (n > bytes_.size() - at_) fail();
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

}  // namespace

bool better(const Screened& a, const Screened& b) {
  if (a.estimate.step_s != b.estimate.step_s) return a.estimate.step_s < b.estimate.step_s;
  return a.index < b.index;
}

bool lighter(const Screened& a, const Screened& b) {
  if (a.estimate.peak_bytes != b.estimate.peak_bytes) {
    return a.estimate.peak_bytes < b.estimate.peak_bytes;
  }
  return a.index < b.index;
}

void ScreenTally::add_feasible(const Screened& s, const TallyBounds& bounds) {
  ++feasible;
  push_bounded(best, s, bounds.best, better);
  if (!bounds.keep_all) return;
  if (bounds.keep == 0) {
    kept.push_back(s);
  } else {
    push_bounded(kept, s, bounds.keep, better);
  }
}

void ScreenTally::add_memory_reject(const Screened& s, const TallyBounds& bounds) {
  ++counts[static_cast<std::size_t>(Reason::kMemory)];
  push_bounded(closest, s, bounds.closest, lighter);
}

void ScreenTally::merge(const ScreenTally& other) {
  for (std::size_t k = 0; k < counts.size(); ++k) counts[k] += other.counts[k];
  feasible += other.feasible;
  best.insert(best.end(), other.best.begin(), other.best.end());
  closest.insert(closest.end(), other.closest.begin(), other.closest.end());
  kept.insert(kept.end(), other.kept.begin(), other.kept.end());
  if (error.empty()) error = other.error;
}

void ScreenTally::finish(const TallyBounds& bounds) {
  sort_and_trim(best, bounds.best, better);
  sort_and_trim(closest, bounds.closest, lighter);
  sort_and_trim(kept, bounds.keep == 0 ? kept.size() : bounds.keep, better);
}

std::string encode(const ScreenTally& tally) {
  Writer w;
  w.put(kMagic);
  w.put(kFormat);
  w.put(tally.counts);
  w.put(tally.feasible);
  w.put_list(tally.best);
  w.put_list(tally.closest);
  w.put_list(tally.kept);
  w.put<std::uint64_t>(tally.error.size());
  std::string bytes = w.take();
  return bytes + tally.error;
}

ScreenTally decode_tally(const std::string& bytes) {
  Reader r(bytes);
  if (r.get<std::uint32_t>() != kMagic || r.get<std::uint32_t>() != kFormat) Reader::fail();
  ScreenTally t;
  t.counts = r.get<decltype(t.counts)>();
  t.feasible = r.get<std::uint64_t>();
  t.best = r.get_list();
  t.closest = r.get_list();
  t.kept = r.get_list();
  t.error = r.get_text();
  if (!r.at_end()) Reader::fail();
  return t;
}

}  // namespace parasim::plan
