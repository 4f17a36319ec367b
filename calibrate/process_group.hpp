#pragma once
// parasim::calib ProcessGroup — the processes of one calibration run: one per GPU (cuda backend)
// or per core (cpu backend), started by `mpirun -np N parasim calibrate ...`.
//
// Built with MPI (process_group_mpi.cpp) it initialises MPI on construction (thread level
// MPI_THREAD_FUNNELED) and finalises it on destruction; run without mpirun it is a group of one
// (MPI singleton). Built without MPI (process_group_nompi.cpp) it is always a group of one, and
// has_mpi() says so, so the harness can skip what needs several ranks and tell the user.
// Only one ProcessGroup may exist in a process (MPI can be initialised once).
//
// Every member function except rank(), size(), the placement accessors and has_mpi() is
// collective: all ranks must call it, in the same order.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace parasim::calib {

class ProcessGroup {
 public:
  ProcessGroup(int* argc, char*** argv);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  static bool has_mpi();
  // "Open MPI v4.1.4, ..." or "none".
  static std::string mpi_version();

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Placement of the ranks over hosts: ranks sharing a host (MPI_COMM_TYPE_SHARED) form a node.
  int local_rank() const { return local_rank_; }  // index among the ranks of this host
  int nodes() const { return nodes_; }
  int ranks_per_node() const { return ranks_per_node_; }  // min over nodes
  bool uniform_nodes() const { return uniform_nodes_; }   // every node has ranks_per_node ranks

  void barrier() const;
  // Copies `size` bytes at `data` from rank 0 to every rank.
  void broadcast(void* data, std::size_t size) const;
  // Element-wise maximum of `values` over the ranks, result on every rank.
  std::vector<double> max(const std::vector<double>& values) const;
  // True on every rank when `value` is true on every rank.
  bool all(bool value) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int nodes_ = 1;
  int ranks_per_node_ = 1;
  bool uniform_nodes_ = true;
};

}  // namespace parasim::calib
