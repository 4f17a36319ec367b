#include "cli/staged_files.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

namespace parasim::cli {
namespace {

constexpr std::size_t kPathBytes = 4096;

struct Slot {
  std::atomic<bool> used{false};
  char path[kPathBytes] = {};
};
// The handler reads `used` without a lock: it must not be a hidden mutex.
static_assert(std::atomic<bool>::is_always_lock_free);

Slot staged_slots[kStagedSlots];
std::mutex staged_mutex;  // registrations only; the handler takes no lock

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];
// The action each signal had before ours: run after the files are removed (the default action
// ends the process; a handler installed before parasim's, a test runner's, gets the signal).
struct sigaction previous_actions[kSignalCount];

extern "C" void remove_staged_and_reraise(int signal_number) {
  for (Slot& slot : staged_slots) {
    if (slot.used.load(std::memory_order_acquire)) ::unlink(slot.path);
  }
  for (int i = 0; i < kSignalCount; ++i) {
    if (kSignals[i] == signal_number) ::sigaction(signal_number, &previous_actions[i], nullptr);
  }
  ::raise(signal_number);
}

// Installs the handler where it is not the current one (another part of the process, or a test
// runner, may have installed its own since), keeping what it replaces.
void install_handlers() {
  for (int i = 0; i < kSignalCount; ++i) {
    struct sigaction current {};
    if (::sigaction(kSignals[i], nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_IGN) continue;  // started with the signal ignored (nohup)
    if (current.sa_handler == remove_staged_and_reraise) continue;
    struct sigaction action {};
    action.sa_handler = remove_staged_and_reraise;
    sigemptyset(&action.sa_mask);
    for (int other : kSignals) sigaddset(&action.sa_mask, other);
    ::sigaction(kSignals[i], &action, &previous_actions[i]);
  }
}

}  // namespace

int register_staged_file(const std::string& path) {
  if (path.size() >= kPathBytes) return -1;
  const std::lock_guard<std::mutex> lock(staged_mutex);
  install_handlers();
  for (int i = 0; i < kStagedSlots; ++i) {
    Slot& slot = staged_slots[i];
    if (slot.used.load(std::memory_order_relaxed)) continue;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.used.store(true, std::memory_order_release);
    return i;
  }
  return -1;
}

void release_staged_file(int slot) {
  if (slot < 0 || slot >= kStagedSlots) return;
  const std::lock_guard<std::mutex> lock(staged_mutex);
  staged_slots[slot].used.store(false, std::memory_order_release);
}

}  // namespace parasim::cli
