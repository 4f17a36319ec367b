#pragma once
// parasim::calib ProcessGroup — the processes of one calibration run: one per GPU (cuda backend)
// or per core (cpu backend), started by `mpirun -np N parasim calibrate ...`.
//
// An interface, so that code in a plugin (the CUDA backend of libparasim_cuda.so) calls it
// through its virtual functions without linking MPI. Two implementations:
//   * the MPI group (process_group_mpi.cpp, in libparasim_mpi.so): initialises MPI on construction (thread level
//     MPI_THREAD_FUNNELED) and finalises it on destruction; run without mpirun it is a group of
//     one (MPI singleton);
//   * SingleProcessGroup (single_process_group.hpp): always one process, no MPI; no_mpi_reason()
//     says why (built without MPI, ...), so the harness can skip what needs several ranks and
//     tell the user.
// open_process_group() picks one. Only one MPI group may exist in a process (MPI can be
// initialised once).
//
// Every member function except the placement accessors, mpi_version(), no_mpi_reason() and
// has_mpi() is collective: all ranks must call it, in the same order.

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace parasim::calib {

// Where this process sits among the ranks.
struct RankPlacement {
  int rank = 0;
  int size = 1;
  int local_rank = 0;      // index among the ranks of this host (MPI_COMM_TYPE_SHARED)
  int nodes = 1;           // hosts with at least one rank
  int ranks_per_node = 1;  // min over nodes
  bool uniform_nodes = true;  // every node has ranks_per_node ranks
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // "Open MPI v4.1.4, ..." or "none".
  virtual std::string mpi_version() const = 0;
  // Empty when the group runs over MPI; otherwise why not, in words a user can act on (e.g.
  // "parasim was built without MPI").
  virtual std::string no_mpi_reason() const = 0;
  bool has_mpi() const { return no_mpi_reason().empty(); }

  int rank() const { return placement_.rank; }
  int size() const { return placement_.size; }
  int local_rank() const { return placement_.local_rank; }
  int nodes() const { return placement_.nodes; }
  int ranks_per_node() const { return placement_.ranks_per_node; }
  bool uniform_nodes() const { return placement_.uniform_nodes; }

  virtual void barrier() const = 0;
  // Copies `size` bytes at `data` from rank 0 to every rank.
  virtual void broadcast(void* data, std::size_t size) const = 0;
  // Element-wise maximum of `values` over the ranks, result on every rank.
  virtual std::vector<double> max(const std::vector<double>& values) const = 0;
  // True on every rank when `value` is true on every rank.
  virtual bool all(bool value) const = 0;
  // Every rank's `bytes` on rank 0, in rank order (its own first); an empty list on the other
  // ranks, which do not wait for rank 0 to receive. Any length (sent in pieces under MPI's int
  // counts).
  virtual std::vector<std::string> gather(const std::string& bytes) const = 0;

 protected:
  ProcessGroup() = default;
  RankPlacement placement_;
};

// The process group of this run (mpi_plugin.cpp): the MPI group of libparasim_mpi.so when that
// plugin loads, otherwise a group of one saying why (mpi_plugin.hpp has the rules). Loads the
// plugin and initialises MPI (the first call in a process); commands that do not measure never
// call it, so they never map Open MPI nor initialise it. `parasim plan` calls it only when it
// was started by an MPI launcher as one of several ranks (cli/plan_command.cpp).
// Throws ProcessGroupUnavailable when this process was started by an MPI launcher as one of
// several ranks but MPI cannot be used (mpi_plugin.hpp), std::runtime_error when MPI fails.
std::unique_ptr<ProcessGroup> open_process_group();

// Several ranks were launched but this process has no MPI to join them: parasim built without
// MPI, or libparasim_mpi.so missing, not loadable or from another build. The message says which.
class ProcessGroupUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace parasim::calib
