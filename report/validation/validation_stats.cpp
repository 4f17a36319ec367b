#include "report/validation/validation_stats.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace parasim::validation {

const char* scope_name(GroupScope scope) {
  switch (scope) {
    case GroupScope::kOverall:
      return "overall";
    case GroupScope::kSource:
      return "source";
    case GroupScope::kFamily:
      return "family";
  }
  return "?";
}

namespace {

// The figures of (signed error, case id) pairs, in file and case order.
ErrorFigures figures_of(const std::vector<std::pair<double, const std::string*>>& errors) {
  ErrorFigures f;
  f.count = errors.size();
  if (errors.empty()) return f;
  std::vector<double> abs_errors;
  double sum_abs = 0;
  double sum = 0;
  for (const auto& [e, id] : errors) {
    const double a = std::abs(e);
    if (abs_errors.empty() || a > std::abs(f.worst)) {
      f.worst = e;
      f.worst_case = *id;
    }
    abs_errors.push_back(a);
    sum_abs += a;
    sum += e;
  }
  const auto n = static_cast<double>(abs_errors.size());
  f.mae = sum_abs / n;
  f.bias = sum / n;
  std::sort(abs_errors.begin(), abs_errors.end());
  const std::size_t mid = abs_errors.size() / 2;
  f.median_abs_error =
      abs_errors.size() % 2 == 1 ? abs_errors[mid] : (abs_errors[mid - 1] + abs_errors[mid]) / 2.0;
  return f;
}

}  // namespace

ErrorStats summarize(const std::vector<const CaseResult*>& results,
                     const std::vector<ValidationFile>& files) {
  ErrorStats s;
  std::map<std::string, std::size_t> reasons;
  std::vector<std::pair<double, const std::string*>> step, memory;
  for (const CaseResult* r : results) {
    ++s.cases;
    const ValidationCase& c = files[r->file].cases[r->index];
    if (!r->simulated) {
      ++s.not_expressible;
      ++reasons[c.not_expressible];
      continue;
    }
    ++s.simulated;
    step.emplace_back(r->signed_error, &c.id);
    if (r->memory_measured) memory.emplace_back(r->memory_signed_error, &c.id);
  }
  s.reasons.assign(reasons.begin(), reasons.end());
  std::stable_sort(s.reasons.begin(), s.reasons.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  const ErrorFigures f = figures_of(step);
  s.mae = f.mae;
  s.median_abs_error = f.median_abs_error;
  s.worst = f.worst;
  s.worst_case = f.worst_case;
  s.bias = f.bias;
  s.memory = figures_of(memory);
  return s;
}

std::vector<GroupStats> group_stats(const std::vector<CaseResult>& results,
                                    const std::vector<ValidationFile>& files) {
  std::vector<const CaseResult*> all;
  std::vector<std::vector<const CaseResult*>> by_file(files.size());
  std::vector<std::string> family_order;
  std::map<std::string, std::vector<const CaseResult*>> by_family;
  for (const CaseResult& r : results) {
    all.push_back(&r);
    by_file[r.file].push_back(&r);
    const std::string& family = files[r.file].cases[r.index].family;
    auto [it, fresh] = by_family.try_emplace(family);
    if (fresh) family_order.push_back(family);
    it->second.push_back(&r);
  }
  std::vector<GroupStats> groups;
  groups.push_back({GroupScope::kOverall, "overall", summarize(all, files)});
  for (std::size_t f = 0; f < files.size(); ++f) {
    if (by_file[f].empty()) continue;  // filtered out
    groups.push_back({GroupScope::kSource, files[f].name, summarize(by_file[f], files)});
  }
  for (const std::string& family : family_order) {
    groups.push_back({GroupScope::kFamily, family, summarize(by_family[family], files)});
  }
  return groups;
}

std::vector<const CaseResult*> worst_cases(const std::vector<CaseResult>& results, std::size_t k) {
  std::vector<const CaseResult*> simulated;
  for (const CaseResult& r : results) {
    if (r.simulated) simulated.push_back(&r);
  }
  std::stable_sort(simulated.begin(), simulated.end(),
                   [](const CaseResult* a, const CaseResult* b) {
                     return std::abs(a->signed_error) > std::abs(b->signed_error);
                   });
  if (simulated.size() > k) simulated.resize(k);
  return simulated;
}

}  // namespace parasim::validation
