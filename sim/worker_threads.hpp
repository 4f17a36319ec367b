#pragma once
// parasim::sim::run_workers — `work(id)` on up to `count` threads (ids 0 .. count-1; id 0 on the
// calling thread), joined before it returns. The callers deal their work from a shared counter,
// so fewer threads give the same result: when the system refuses a thread (std::system_error
// from std::thread, e.g. `--threads 100000` past the process limit), no further thread is
// started and the ones running finish the work. Returns how many ran.
//
// `work` must catch its own exceptions (the callers keep the first and stop the others by
// moving their counter past the end); one escaping is std::terminate, as from std::thread.

#include <functional>

namespace parasim::sim {

int run_workers(int count, const std::function<void(int id)>& work);

}  // namespace parasim::sim
