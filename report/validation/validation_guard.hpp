#pragma once
// parasim::validation — the accuracy regression guard (scenarios/validation/guard.json).
//
// The guard records the mean absolute step-time error (and the bias, for information) of a
// validation set, overall and per source, as a commit left them:
//   {"parasim_validation_guard": 1, "about": "...", "recorded_at_commit": "<git hash>",
//    "mae_tolerance_pct_points": 0.05,
//    "overall": {"simulated": 1451, "mae_pct": 26.1, "bias_pct": -25.9},
//    "sources": {"vtrain": {"simulated": 1441, "mae_pct": ..., "bias_pct": ...}, ...}}
// (mae_pct and bias_pct are null for a source with no simulated case). A run passes when the
// overall MAE and every recorded source's MAE are at most the recorded value plus the tolerance
// (percentage points). A better result passes too; re-recording it (scripts/validation/
// record_guard.sh) tightens the guard. Every recorded source must be in the run.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/validation/validation_stats.hpp"

namespace parasim::validation {

struct GuardEntry {
  std::size_t simulated = 0;
  std::optional<double> mae_pct;
  std::optional<double> bias_pct;
};

struct Guard {
  std::string path;
  std::string recorded_at_commit;
  double tolerance_pct_points = 0.05;
  GuardEntry overall;
  std::map<std::string, GuardEntry> sources;
};

// Throws cost::InputError with every problem of the file.
Guard load_guard(const std::string& path);

struct GuardVerdict {
  bool passed = true;
  std::string text;  // one line per comparison, then what to do if it failed
};

GuardVerdict check_guard(const Guard& guard, const std::vector<GroupStats>& groups);

}  // namespace parasim::validation
