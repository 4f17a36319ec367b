#pragma once
// parasim::validation — simulating the cases of validation files (symmetric mode, as `parasim
// simulate` does by default) and scoring each: signed error = (predicted - measured) / measured.
//
// Where the predicted step went, per case:
// - critical_path_s: the step's critical path by op category (StepReport::critical_path_s):
//   "forward", "backward" (recomputation runs inside the backward and is counted there),
//   "optimizer", and the communication that delayed the step, "tp-comm", "pp-comm", "dp-comm",
//   "cp-comm". Each moment of the path is counted once, so the parts add up to the step time of
//   a flush schedule; for asynchronous schedules they are the run's path divided by the steps
//   simulated.
// - exposed_comm_s: per GPU, communication of each kind running while the compute stream is
//   idle (StepReport::exposed_comm_s).
// - bubble_fraction: the pipeline bubble, StepReport::bubble_fraction averaged over stages.
// - host_busy_s: the framework's host thread per step per GPU (StepReport::host_busy_s); its
//   share of the critical path is the "host" category above.
//
// Results come back in case order whatever the thread count, so the output is the same bytes.

#include <array>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "costmodel/profile.hpp"
#include "report/validation/validation_file.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::validation {

struct StepBreakdown {
  std::vector<std::pair<std::string, double>> critical_path_s;  // category -> seconds
  std::array<double, strat::kCommKinds> exposed_comm_s{};       // per GPU, by kind
  double bubble_fraction = 0;                                   // mean over stages
  double mfu = 0;
  double host_busy_s = 0;  // the framework's host thread per step per GPU (StepReport)
};

struct CaseResult {
  std::size_t file = 0;    // index into the files
  std::size_t index = 0;   // index into that file's cases
  bool simulated = false;  // false: not expressible
  double measured_s = 0;   // NaN when a not-expressible case gives no measurement
  double predicted_s = 0;
  double signed_error = 0;  // (predicted - measured) / measured
  StepBreakdown breakdown;
  // Peak memory: the ledger's peak of the fullest simulated GPU (StepReport's peak_bytes, the
  // bytes tensors request; the CUDA context and NCCL buffers left out), and, where the case
  // measured it, its error.
  double predicted_memory_bytes = 0;
  bool memory_measured = false;
  double measured_memory_bytes = 0;
  double memory_signed_error = 0;  // (predicted - measured) / measured
};

// Which cases run: those whose id, family or file name contains `filter` (every case when
// empty). Not-expressible cases are kept (they are counted, not simulated).
std::vector<std::pair<std::size_t, std::size_t>> select_cases(
    const std::vector<ValidationFile>& files, const std::string& filter);

struct RunOptions {
  // For every case, instead of its file's own profile (ValidationFile::profile); nullptr: each
  // file's profile, or the analytical model for a file without one.
  const cost::Profile* profile = nullptr;
  bool allow_foreign_profile = false;  // apply a profile to another device (profile_fit.hpp)
  int threads = 1;
  // Called after each case with (done, total), from worker threads one at a time.
  std::function<void(std::size_t, std::size_t)> progress;
};

// Cases that could not be simulated; message lines "FILE: /cases/<i>: case "id": ...".
class RunError : public std::runtime_error {
 public:
  RunError(const std::string& text, int exit_code)
      : std::runtime_error(text), exit_code_(exit_code) {}
  // 2 when every failure is an input problem (a time out of range, too many ops), 1 otherwise.
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

struct RunOutput {
  std::vector<CaseResult> results;    // in the order of `selection`
  std::vector<std::string> warnings;  // the cost model's, "N cases: text", sorted by text
};

// Simulates the selected cases. Throws RunError naming every case that failed.
RunOutput run_cases(const std::vector<ValidationFile>& files,
                    const std::vector<std::pair<std::size_t, std::size_t>>& selection,
                    const RunOptions& options);

}  // namespace parasim::validation
