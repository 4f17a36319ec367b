// ProcessGroup over MPI (calibrate/process_group.hpp).
#include <mpi.h>

#include <stdexcept>
#include <string>

#include "calibrate/process_group.hpp"

namespace parasim::calib {
namespace {

MPI_Comm world() { return MPI_COMM_WORLD; }

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw std::runtime_error(std::string(call) + " failed: " + std::string(text, length));
}

}  // namespace

ProcessGroup::ProcessGroup(int* argc, char*** argv) {
  int provided = 0;
  check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(world(), MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(world(), &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(world(), &size_), "MPI_Comm_size");
  MPI_Comm local;
  check(MPI_Comm_split_type(world(), MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  int local_size = 1;
  MPI_Comm_rank(local, &local_rank_);
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  // Nodes: count the local leaders; ranks per node: min and max of the local sizes.
  const int leader = local_rank_ == 0 ? 1 : 0;
  check(MPI_Allreduce(&leader, &nodes_, 1, MPI_INT, MPI_SUM, world()), "MPI_Allreduce");
  int smallest = 0, largest = 0;
  MPI_Allreduce(&local_size, &smallest, 1, MPI_INT, MPI_MIN, world());
  MPI_Allreduce(&local_size, &largest, 1, MPI_INT, MPI_MAX, world());
  ranks_per_node_ = smallest;
  uniform_nodes_ = smallest == largest;
}

ProcessGroup::~ProcessGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

bool ProcessGroup::has_mpi() { return true; }

std::string ProcessGroup::mpi_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  // The first line ("Open MPI v4.1.4, package: ...") is enough for provenance.
  if (const auto eol = version.find_first_of("\r\n"); eol != std::string::npos) version.resize(eol);
  while (!version.empty() && (version.back() == ' ' || version.back() == '\0')) version.pop_back();
  return version;
}

void ProcessGroup::barrier() const { check(MPI_Barrier(world()), "MPI_Barrier"); }

void ProcessGroup::broadcast(void* data, std::size_t size) const {
  check(MPI_Bcast(data, static_cast<int>(size), MPI_BYTE, 0, world()), "MPI_Bcast");
}

std::vector<double> ProcessGroup::max(const std::vector<double>& values) const {
  std::vector<double> out(values.size());
  check(MPI_Allreduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                      MPI_MAX, world()),
        "MPI_Allreduce");
  return out;
}

bool ProcessGroup::all(bool value) const {
  int mine = value ? 1 : 0, every = 0;
  check(MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, world()), "MPI_Allreduce");
  return every == 1;
}

}  // namespace parasim::calib
