#pragma once
// parasim::plan::SpaceShare — this process's share of the search space when several processes
// search it together (`mpirun -np K parasim plan`, docs/planner.md): the index space is cut into
// blocks of kShareBlock candidates, dealt out round-robin (block b to rank b mod size), so the
// split is deterministic, balanced where the costly candidates cluster (the layouts are the
// slowest-varying axis) and independent of each rank's thread count.
//
// The planner knows nothing of MPI: the caller (cli/plan_command.cpp, from calibrate's
// ProcessGroup) gives the rank, the size and `gather`, which brings every rank's bytes to rank
// 0. A default SpaceShare is one process with the whole space.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace parasim::plan {

inline constexpr std::uint64_t kShareBlock = 4096;  // candidates per block (threads and ranks)

struct SpaceShare {
  int rank = 0;  // 0 <= rank < size; rank 0 simulates and returns the result
  int size = 1;
  // Collective, called once by every rank: every rank's bytes on rank 0 in rank order (its own
  // first), an empty list on the others. Unused (may be empty) when size is 1.
  std::function<std::vector<std::string>(const std::string& bytes)> gather;

  // Blocks of a space of `candidates` candidates.
  static std::uint64_t blocks(std::uint64_t candidates) {
    return (candidates + kShareBlock - 1) / kShareBlock;
  }
  // The index of this share's k-th block (>= blocks(n) past its last).
  std::uint64_t block(std::uint64_t k) const {
    return static_cast<std::uint64_t>(rank) + k * static_cast<std::uint64_t>(size);
  }
  // Candidates of this share in a space of `candidates`.
  std::uint64_t candidates_of_share(std::uint64_t candidates) const {
    std::uint64_t n = 0;
    for (std::uint64_t k = 0, b = block(0); b < blocks(candidates); b = block(++k)) {
      n += std::min(candidates, (b + 1) * kShareBlock) - b * kShareBlock;
    }
    return n;
  }
};

}  // namespace parasim::plan
