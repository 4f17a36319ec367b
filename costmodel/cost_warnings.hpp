#pragma once
// parasim::cost::CostWarnings — what the cost model had to guess while answering, for the user.
//
// The measured-table paths of the cost model (measured_gemm_model, measured_collectives, solver
// scaling, profile checks) answer every question, but some answers are extrapolations or
// fall-backs to the analytical model; each such case adds one line of text here. The CLI prints
// the list after a run. Lines are deduplicated (the same shape or series asked for a thousand
// times is one line) and listed sorted, so the list does not depend on the order of questions.
//
// Thread-safe: a CostModel (and every copy of it) shares one CostWarnings through a shared_ptr,
// and cost models may be used from several threads at once.

#include <cstddef>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace parasim::cost {

class CostWarnings {
 public:
  // Records one warning; a line already recorded is ignored.
  void add(std::string line);
  // Every distinct line, sorted (std::string ordering).
  std::vector<std::string> list() const;
  std::size_t size() const;
  bool empty() const { return size() == 0; }

 private:
  mutable std::mutex mutex_;
  std::set<std::string> lines_;
};

}  // namespace parasim::cost
