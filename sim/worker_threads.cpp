#include "sim/worker_threads.hpp"

#include <system_error>
#include <thread>
#include <vector>

namespace parasim::sim {

int run_workers(int count, const std::function<void(int id)>& work) {
  std::vector<std::thread> pool;
  if (count > 1) pool.reserve(static_cast<std::size_t>(count - 1));
  for (int id = 1; id < count; ++id) {
    try {
      pool.emplace_back(work, id);
    } catch (const std::system_error&) {
      break;  // the threads already running share the rest
    }
  }
  work(0);
  for (auto& t : pool) t.join();
  return static_cast<int>(pool.size()) + 1;
}

}  // namespace parasim::sim
