// sim::run_workers: every id runs once, id 0 on the calling thread, joined before it returns.
#include "sim/worker_threads.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

namespace parasim::sim {

TEST_CASE("run_workers runs ids 0 .. count-1 once each, id 0 on the caller, and joins them") {
  for (int count : {1, 2, 7}) {
    std::mutex m;
    std::multiset<int> ids;
    std::thread::id caller_of_zero;
    const int ran = run_workers(count, [&](int id) {
      const std::lock_guard<std::mutex> lock(m);
      ids.insert(id);
      if (id == 0) caller_of_zero = std::this_thread::get_id();
    });
    CHECK(ran == count);
    CHECK(ids.size() == static_cast<std::size_t>(count));
    for (int id = 0; id < count; ++id) CHECK(ids.count(id) == 1);
    CHECK(caller_of_zero == std::this_thread::get_id());
  }
}

TEST_CASE("run_workers: work dealt from a shared counter is all done, whatever ran") {
  std::atomic<int> next{0}, done{0};
  run_workers(4, [&](int) {
    while (next.fetch_add(1) < 1000) done.fetch_add(1);
  });
  CHECK(done.load() == 1000);
}

}  // namespace parasim::sim
