#pragma once
// parasim::validation — validation files: measured training runs, each mapped to a scenario.
//
// Format (docs/validation.md):
//   {"parasim_validation": 1, "source": "<citation>", "license_note": "...", "mapping": "<how
//    the cases were mapped to scenarios, and why>", "profile": "<optional: a cost-model profile
//    of the machine the cases ran on, its path relative to this file>", "cases": [
//     {"id": "...", "family": "...",
//      "measured": {"step_time_s": 0.4747, "from": "/measured/iteration_ms",
//                   "peak_memory_bytes": 5.9e10, "memory_from": "/measured/memory_gb"},
//      "scenario": {...a complete scenario, as in a scenario file...},
//      "published": {...the source's own record of the case, verbatim...}},
//     {"id": "...", "family": "...", "not_expressible": "<the feature parasim lacks>",
//      "published": {...}}]}
// Every key is checked (unknown keys are errors); every problem of a file is reported at once
// with its JSON path, and a scenario the scenario parser rejects is reported at
// /cases/<i>/scenario/<path> with the case id: that is a bug in the data, not a failed case.
// "measured.from" is a JSON Pointer into "published": the value it names must be a number whose
// key ends in its unit (_s or _ms) and agree with step_time_s (relative 1e-9), so a converter
// cannot mislabel a figure. "peak_memory_bytes" (optional) is a measured peak of the allocator
// (torch.cuda.max_memory_allocated, the largest GPU's), scored against parasim's
// peak_memory_bytes; "memory_from" names its figure in "published" the same way, its key
// ending in its unit (_gb: 1e9 bytes, _gib: 2^30, _mb, _mib, _bytes).
// "profile" (docs/profile.md) holds what was measured on the cases' own machine (its
// collectives, say); the cases are then simulated with it, as `parasim simulate --profile`
// would, unless validate-against is given a --profile of its own for every case. A profile that
// cannot be read is a problem of the validation file, at /profile, with the profile's own
// problems after it.

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/profile.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::validation {

// Inputs too large are refused with the limit named rather than exhausting memory.
struct ValidationLimits {
  std::size_t max_file_bytes = std::size_t{64} << 20;  // 64 MiB of JSON per file
  std::size_t max_cases = 100'000;                     // per file
  std::size_t max_files = 1'000;                       // in one folder
};

struct ValidationCase {
  std::string id;
  std::string family;
  std::size_t index = 0;                       // position in the file's "cases"
  std::optional<double> measured_step_time_s;  // always set for an expressible case
  std::string measured_from;                   // JSON Pointer into "published" (may be empty)
  std::optional<double> measured_peak_memory_bytes;  // the allocator's peak, when measured
  std::string memory_from;                            // its JSON Pointer into "published"
  std::optional<strat::Scenario> scenario;     // absent: not expressible
  std::string not_expressible;                 // the reason, when `scenario` is absent
  bool expressible() const { return scenario.has_value(); }
};

struct ValidationFile {
  std::string path;    // as given (in messages)
  std::string name;    // the file name without .json: the source's short name
  std::string source;  // the citation
  std::string license_note;
  std::string mapping;
  std::string profile_path;  // as written in the file ("" when it names none)
  std::shared_ptr<const cost::Profile> profile;  // loaded from beside the file; null: none
  std::vector<ValidationCase> cases;
};

// Problems of one or more files, one "FILE: /json/path: message" line each (exit code 2).
class ValidationInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses one validation file's text; `path` names it in messages. Throws cost::InputError with
// every problem found.
ValidationFile parse_validation_file(std::string_view text, const std::string& path,
                                     const ValidationLimits& limits = {});

// A validation file, or every *.json in a folder (not its subfolders) whose top level has
// "parasim_validation", sorted by file name; other JSON files there are skipped. Throws
// ValidationInputError with the problems of every file at once.
std::vector<ValidationFile> load_validation_set(const std::string& file_or_folder,
                                                const ValidationLimits& limits = {});

}  // namespace parasim::validation
