#pragma once
// parasim::validation — error statistics of a group of cases (overall, one source, one family).
//
// Over the simulated cases of the group, with e = (predicted - measured) / measured:
//   mae = mean |e|; median = the median of |e| (the mean of the two middle values for an even
//   count); worst = the e of largest |e| (the first such case in file and case order on a tie);
//   bias = mean e. Not-expressible cases are counted, with their reasons grouped, and enter no
//   statistic. A group with no simulated case has no statistics (has_errors() is false).
// The same figures for the peak memory over the simulated cases that measured it (`memory`).

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "report/validation/validation_run.hpp"

namespace parasim::validation {

// mae, median, worst and bias of one quantity's signed errors (as above).
struct ErrorFigures {
  std::size_t count = 0;
  double mae = 0;
  double median_abs_error = 0;
  double worst = 0;
  std::string worst_case;  // its id
  double bias = 0;
};

struct ErrorStats {
  std::size_t cases = 0;
  std::size_t simulated = 0;
  std::size_t not_expressible = 0;
  // (reason, cases), most cases first, then by reason text.
  std::vector<std::pair<std::string, std::size_t>> reasons;
  double mae = 0;
  double median_abs_error = 0;
  double worst = 0;
  std::string worst_case;  // its id
  double bias = 0;
  ErrorFigures memory;  // peak memory, over the simulated cases that measured it
  bool has_errors() const { return simulated > 0; }
};

enum class GroupScope { kOverall, kSource, kFamily };
const char* scope_name(GroupScope scope);  // "overall", "source", "family"

struct GroupStats {
  GroupScope scope = GroupScope::kOverall;
  std::string name;  // "overall", the file's name, or the family
  ErrorStats stats;
};

// The statistics of `results` (in the order given).
ErrorStats summarize(const std::vector<const CaseResult*>& results,
                     const std::vector<ValidationFile>& files);

// Overall, then each source (file order), then each family (order of first appearance).
std::vector<GroupStats> group_stats(const std::vector<CaseResult>& results,
                                    const std::vector<ValidationFile>& files);

// The simulated cases by decreasing |error| (stable: file and case order on ties), at most k.
std::vector<const CaseResult*> worst_cases(const std::vector<CaseResult>& results, std::size_t k);

}  // namespace parasim::validation
