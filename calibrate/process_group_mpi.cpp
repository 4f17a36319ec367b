// The MPI process group (calibrate/mpi_process_group.hpp).
#include <mpi.h>

#include <stdexcept>
#include <string>

#include "calibrate/mpi_process_group.hpp"

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

class MpiProcessGroup final : public ProcessGroup {
 public:
  MpiProcessGroup();
  ~MpiProcessGroup() override;

  std::string mpi_version() const override;
  std::string no_mpi_reason() const override { return {}; }
  void barrier() const override { check(MPI_Barrier(world()), "MPI_Barrier"); }
  void broadcast(void* data, std::size_t size) const override;
  std::vector<double> max(const std::vector<double>& values) const override;
  bool all(bool value) const override;
};

MpiProcessGroup::MpiProcessGroup() {
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(world(), MPI_ERRORS_RETURN);
  RankPlacement& p = placement_;
  check(MPI_Comm_rank(world(), &p.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(world(), &p.size), "MPI_Comm_size");
  MPI_Comm local;
  check(MPI_Comm_split_type(world(), MPI_COMM_TYPE_SHARED, p.rank, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  int local_size = 1;
  MPI_Comm_rank(local, &p.local_rank);
  MPI_Comm_size(local, &local_size);
  MPI_Comm_free(&local);
  // Nodes: count the local leaders; ranks per node: min and max of the local sizes.
  const int leader = p.local_rank == 0 ? 1 : 0;
  check(MPI_Allreduce(&leader, &p.nodes, 1, MPI_INT, MPI_SUM, world()), "MPI_Allreduce");
  int smallest = 0, largest = 0;
  MPI_Allreduce(&local_size, &smallest, 1, MPI_INT, MPI_MIN, world());
  MPI_Allreduce(&local_size, &largest, 1, MPI_INT, MPI_MAX, world());
  p.ranks_per_node = smallest;
  p.uniform_nodes = smallest == largest;
}

MpiProcessGroup::~MpiProcessGroup() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::string MpiProcessGroup::mpi_version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  // The first line ("Open MPI v4.1.4, package: ...") is enough for provenance.
  if (const auto eol = version.find_first_of("\r\n"); eol != std::string::npos) version.resize(eol);
  while (!version.empty() && (version.back() == ' ' || version.back() == '\0')) version.pop_back();
  return version;
}

void MpiProcessGroup::broadcast(void* data, std::size_t size) const {
  check(MPI_Bcast(data, static_cast<int>(size), MPI_BYTE, 0, world()), "MPI_Bcast");
}

std::vector<double> MpiProcessGroup::max(const std::vector<double>& values) const {
  std::vector<double> out(values.size());
  check(MPI_Allreduce(values.data(), out.data(), static_cast<int>(values.size()), MPI_DOUBLE,
                      MPI_MAX, world()),
        "MPI_Allreduce");
  return out;
}

bool MpiProcessGroup::all(bool value) const {
  int mine = value ? 1 : 0, every = 0;
  check(MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_MIN, world()), "MPI_Allreduce");
  return every == 1;
}

}  // namespace

std::unique_ptr<ProcessGroup> make_mpi_process_group() {
  return std::make_unique<MpiProcessGroup>();
}

}  // namespace parasim::calib
