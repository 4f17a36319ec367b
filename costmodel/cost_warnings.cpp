#include "costmodel/cost_warnings.hpp"

namespace parasim::cost {

void CostWarnings::add(std::string line) {
  const std::lock_guard lock(mutex_);
  lines_.insert(std::move(line));
}

std::vector<std::string> CostWarnings::list() const {
  const std::lock_guard lock(mutex_);
  return {lines_.begin(), lines_.end()};
}

std::size_t CostWarnings::size() const {
  const std::lock_guard lock(mutex_);
  return lines_.size();
}

}  // namespace parasim::cost
