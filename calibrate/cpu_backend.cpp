#include "calibrate/cpu_backend.hpp"

#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <stdexcept>

#include "calibrate/chebyshev.hpp"
#include "calibrate/mpi_plugin.hpp"
#include "calibrate/inverse_root.hpp"
#include "calibrate/power_iteration.hpp"

namespace parasim::calib {
namespace {

// Bytes written before each GEMM sample to evict the inputs from the caches (larger than the
// last-level cache of common server CPUs per core group).
constexpr std::size_t kCacheFlushBytes = std::size_t{64} << 20;
constexpr std::uint64_t kInputSeed = 0xca1b'0001ULL;

void flush_caches() {
  static std::vector<char> buffer(kCacheFlushBytes);
  static char value = 0;
  ++value;
  std::fill(buffer.begin(), buffer.end(), value);
}

double seconds_of(const std::function<void()>& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Warm-up runs, then `iterations` timed samples, each after `before` (untimed).
cost::MeasuredTime time_samples(const kernels::TimingOptions& o, const std::function<void()>& body,
                                const std::function<void()>& before = {}) {
  for (int i = 0; i < o.warmup; ++i) body();
  std::vector<double> samples;
  for (int i = 0; i < o.iterations; ++i) {
    if (before) before();
    samples.push_back(seconds_of(body));
  }
  return to_measured(kernels::summarize(samples));
}

Solver solver_of(const std::string& name) {
  if (name == "newton-db") return Solver::kNewtonDB;
  if (name == "coupled-newton") return Solver::kCoupledNewton;
  if (name == "chebyshev") return Solver::kChebyshev;
  if (name == "evd") return Solver::kEigendecomposition;
  throw std::invalid_argument("unknown solver '" + name + "'");
}

// Tolerance small enough that the fixed iteration count always runs to the end.
constexpr double kNoEarlyStop = 1e-300;

}  // namespace

CpuBackend::CpuBackend(const ProcessGroup& group) : group_(group) {}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(colon + 1);
        name.erase(0, name.find_first_not_of(' '));
        return name;
      }
    }
  }
  return "unknown CPU";
}

cost::Provenance CpuBackend::provenance() const {
  cost::Provenance p;
  p.backend = "cpu";
  p.device = cpu_model_name();
  p.device_count = group_.size();
  p.ranks = group_.size();
  p.nodes = group_.nodes();
  p.mpi = group_.mpi_version();
  p.clocks = "not controlled (CPU frequency scaling as configured)";
  return p;
}

cost::GroupPlacement CpuBackend::placement() const {
  const int per_node = group_.uniform_nodes() ? group_.ranks_per_node() : 1;
  return cost::GroupPlacement{group_.size(), per_node, group_.size() / per_node};
}

bool CpuBackend::has_collectives() const { return group_.has_mpi() && group_.size() > 1; }

bool CpuBackend::has_solver(const SolverCase& c) const {
  return !c.batched && c.dtype == cost::Dtype::kFp32;
}

cost::MeasuredTime CpuBackend::gemm(const GemmCase& c, const kernels::TimingOptions& o) {
  if (c.shape.dtype != cost::Dtype::kFp32) {
    throw std::invalid_argument("the cpu backend measures fp32 GEMMs only");
  }
  const auto m = static_cast<Eigen::Index>(c.shape.m), n = static_cast<Eigen::Index>(c.shape.n),
             k = static_cast<Eigen::Index>(c.shape.k);
  const Eigen::MatrixXf a = seeded_uniform_matrix(c.transpose_a ? k : m, c.transpose_a ? m : k,
                                                  kInputSeed).cast<float>();
  const Eigen::MatrixXf b = seeded_uniform_matrix(c.transpose_b ? n : k, c.transpose_b ? k : n,
                                                  kInputSeed + 1).cast<float>();
  Eigen::MatrixXf out(m, n);
  auto body = [&] {
    for (std::int64_t i = 0; i < c.shape.batch; ++i) {
      if (c.transpose_a && c.transpose_b) out.noalias() = a.transpose() * b.transpose();
      else if (c.transpose_a) out.noalias() = a.transpose() * b;
      else if (c.transpose_b) out.noalias() = a * b.transpose();
      else out.noalias() = a * b;
    }
  };
  return time_samples(o, body, o.flush_l2 ? std::function<void()>(flush_caches) : nullptr);
}

cost::MeasuredTime CpuBackend::solver(const SolverCase& c, const kernels::TimingOptions& o) {
  if (!has_solver(c)) {
    throw std::invalid_argument("the cpu backend times solvers block by block in fp32 only");
  }
  const Solver solver = solver_of(c.solver);
  std::vector<Eigen::MatrixXd> blocks;
  for (int i = 0; i < c.batch; ++i) {
    blocks.push_back(spd_with_spectrum(geometric_spectrum(c.block, 1.0, 1e3), kInputSeed + i));
  }
  auto body = [&] {
    for (const auto& a : blocks) {
      switch (solver) {
        case Solver::kEigendecomposition: inverse_root_evd(a, 4); break;
        case Solver::kNewtonDB:
          inverse_root_newton_db(a, 4, Scaling::kSpectral, kNoEarlyStop, c.iterations);
          break;
        case Solver::kCoupledNewton:
          inverse_root_coupled_newton(a, 4, Scaling::kSpectral, kNoEarlyStop, c.iterations);
          break;
        case Solver::kChebyshev:
          inverse_root_chebyshev(a, 4, c.iterations, Scaling::kSpectral);
          break;
      }
    }
  };
  return time_samples(o, body);
}

cost::NormPoint CpuBackend::norm(const NormCase& c, const kernels::TimingOptions& o) {
  Eigen::MatrixXf x = seeded_uniform_matrix(c.hidden, c.rows, kInputSeed).cast<float>();
  const Eigen::VectorXf w = Eigen::VectorXf::Ones(c.hidden);
  Eigen::MatrixXf y(c.hidden, c.rows);
  Eigen::VectorXf statistic(c.rows);
  auto body = [&] {
    for (Eigen::Index r = 0; r < x.cols(); ++r) {
      const float sum_squares = x.col(r).squaredNorm();
      if (c.fused_statistic) statistic(r) = sum_squares;
      const float inv = 1.0f / std::sqrt(sum_squares / static_cast<float>(c.hidden) + 1e-6f);
      y.col(r) = x.col(r).cwiseProduct(w) * inv;
    }
  };
  cost::NormPoint point;
  point.rows = c.rows;
  point.hidden = c.hidden;
  point.fused_statistic = c.fused_statistic;
  const auto rows = static_cast<double>(c.rows), hidden = static_cast<double>(c.hidden);
  point.moved = cost::Bytes{4.0 * (2.0 * rows * hidden + hidden) +
                            (c.fused_statistic ? 4.0 * rows : 0.0)};
  point.time = time_samples(o, body, o.flush_l2 ? std::function<void()>(flush_caches) : nullptr);
  return point;
}

cost::MeasuredTime CpuBackend::launch_overhead(const kernels::TimingOptions& /*o*/) {
  throw std::logic_error("the cpu backend has no kernel launches to measure");
}

cost::CollectivePoint CpuBackend::collective(cost::CollectiveKind kind, cost::Bytes message,
                                             bool in_place, const kernels::TimingOptions& o) {
  if (!group_.has_mpi()) {
    throw std::runtime_error("the cpu backend cannot measure collectives: " +
                             group_.no_mpi_reason());
  }
  return measure_mpi_collective(group_, kind, message, in_place, o);
}

cost::OverlapPoint CpuBackend::overlap(const OverlapCase& /*c*/,
                                       const kernels::TimingOptions& /*o*/) {
  throw std::logic_error("the cpu backend has no streams to overlap");
}

}  // namespace parasim::calib
