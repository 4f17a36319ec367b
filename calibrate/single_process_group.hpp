#pragma once
// parasim::calib SingleProcessGroup — a ProcessGroup of one process without MPI
// (process_group.hpp): every collective is the identity, and no_mpi_reason() says why there is
// no MPI (given at construction, never empty).

#include <string>

#include "calibrate/process_group.hpp"

namespace parasim::calib {

class SingleProcessGroup final : public ProcessGroup {
 public:
  // `no_mpi_reason`: e.g. "parasim was built without MPI".
  explicit SingleProcessGroup(std::string no_mpi_reason);

  std::string mpi_version() const override { return "none"; }
  std::string no_mpi_reason() const override { return no_mpi_reason_; }
  void barrier() const override {}
  void broadcast(void* /*data*/, std::size_t /*size*/) const override {}
  std::vector<double> max(const std::vector<double>& values) const override { return values; }
  bool all(bool value) const override { return value; }
  std::vector<std::string> gather(const std::string& bytes) const override { return {bytes}; }

 private:
  std::string no_mpi_reason_;
};

}  // namespace parasim::calib
