#pragma once
// parasim::plan::ScreenTally — what the analytic screen keeps of the candidates it saw (a
// thread's blocks, a rank's share, or the whole space): rejects by reason, the feasible count,
// the best estimates, the lightest memory rejects, and (for --json) the kept feasible ones.
//
// Every list is ordered by a total order, (estimate, index) or (peak, index), and bounded to
// its n first, so merging tallies of disjoint index sets in any grouping and then trimming gives
// exactly the tally of their union: the result cannot depend on the thread or rank count.
//
// encode/decode carry a tally between the ranks of one run (the same executable on every rank:
// Screened is copied as its bytes); decode throws std::runtime_error on bytes that are not a
// tally.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "planner/candidate.hpp"
#include "planner/rules.hpp"
#include "planner/screen.hpp"

namespace parasim::plan {

struct Screened {
  std::uint64_t index = 0;
  Candidate candidate;
  Estimate estimate;
};

// (step time, index) and (peak bytes, index): the orders of `best`/`kept` and `closest`.
bool better(const Screened& a, const Screened& b);
bool lighter(const Screened& a, const Screened& b);

struct TallyBounds {
  std::size_t best = 0;      // keep the `best` best estimates
  std::size_t closest = 5;   // and the lightest `closest` memory rejects
  bool keep_all = false;     // keep feasible candidates too ...
  std::size_t keep = 0;      // ... at most this many, best first (0: every one)
};

struct ScreenTally {
  std::array<std::uint64_t, static_cast<std::size_t>(Reason::kCount)> counts{};
  std::uint64_t feasible = 0;
  std::vector<Screened> best, closest, kept;  // heaps while screening; sorted by finish()
  std::string error;  // a rank's failure, carried to rank 0 (empty: none)

  // Adds a feasible candidate / a memory reject, keeping the lists within `bounds`.
  void add_feasible(const Screened& s, const TallyBounds& bounds);
  void add_memory_reject(const Screened& s, const TallyBounds& bounds);
  // Adds `other` (a disjoint set of indices); call finish() after the last merge.
  void merge(const ScreenTally& other);
  // Sorts the lists best first and trims them to `bounds`.
  void finish(const TallyBounds& bounds);
};

std::string encode(const ScreenTally& tally);
ScreenTally decode_tally(const std::string& bytes);

}  // namespace parasim::plan
