// The MPI process group (calibrate/mpi_process_group.hpp).
#include <mpi.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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
  std::vector<std::string> gather(const std::string& bytes) const override;
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

// Point to point, rank by rank: the length (8 bytes), then the bytes in pieces of at most
// kPiece, so that a length past MPI's int counts needs no special case.
constexpr std::size_t kPiece = std::size_t{1} << 30;
constexpr int kGatherTag = 7103;

std::vector<std::string> MpiProcessGroup::gather(const std::string& bytes) const {
  if (rank() != 0) {
    const unsigned long long length = bytes.size();
    check(MPI_Send(&length, 1, MPI_UNSIGNED_LONG_LONG, 0, kGatherTag, world()), "MPI_Send");
    for (std::size_t at = 0; at < bytes.size(); at += kPiece) {
      const int n = static_cast<int>(std::min(kPiece, bytes.size() - at));
      check(MPI_Send(bytes.data() + at, n, MPI_BYTE, 0, kGatherTag, world()), "MPI_Send");
    }
    return {};
  }
  std::vector<std::string> all_bytes{bytes};
  for (int from = 1; from < size(); ++from) {
    unsigned long long length = 0;
    check(MPI_Recv(&length, 1, MPI_UNSIGNED_LONG_LONG, from, kGatherTag, world(),
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
    std::string received(static_cast<std::size_t>(length), '\0');
    for (std::size_t at = 0; at < received.size(); at += kPiece) {
      const int n = static_cast<int>(std::min(kPiece, received.size() - at));
      check(MPI_Recv(received.data() + at, n, MPI_BYTE, from, kGatherTag, world(),
                     MPI_STATUS_IGNORE),
            "MPI_Recv");
    }
    all_bytes.push_back(std::move(received));
  }
  return all_bytes;
}

}  // namespace

std::unique_ptr<ProcessGroup> make_mpi_process_group() {
  return std::make_unique<MpiProcessGroup>();
}

}  // namespace parasim::calib
