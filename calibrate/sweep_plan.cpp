#include "calibrate/sweep_plan.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace parasim::calib {
namespace {

using cost::CollectiveKind;
using cost::Dtype;

constexpr double kKiB = 1024.0, kMiB = kKiB * 1024.0, kGiB = kMiB * 1024.0;
constexpr int kNewtonIterations = 10;  // the scenario default (strategies/input/scenario.hpp)
constexpr int kChebyshevDegree = 60;   // the scenario default

constexpr CollectiveKind kKinds[] = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                     CollectiveKind::kReduceScatter, CollectiveKind::kBroadcast,
                                     CollectiveKind::kAllToAll, CollectiveKind::kSendRecv};

struct ByteRange {
  double min, max, factor;
};

ByteRange byte_range(const MeasurementBackend& backend, const SweepOptions& o) {
  const bool cuda = backend.name() == "cuda";
  ByteRange r = cuda ? (o.quick ? ByteRange{64 * kKiB, 256 * kMiB, 4} : ByteRange{kKiB, kGiB, 2})
                     : (o.quick ? ByteRange{4 * kKiB, 4 * kMiB, 4} : ByteRange{kKiB, 64 * kMiB, 2});
  if (o.min_bytes) r.min = *o.min_bytes;
  if (o.max_bytes) r.max = *o.max_bytes;
  if (o.factor) r.factor = *o.factor;
  if (!(r.min > 0)) throw std::invalid_argument(fmt::format("-b must be > 0 bytes, got {}", r.min));
  if (r.max < r.min) {
    throw std::invalid_argument(fmt::format("-e ({} bytes) is below -b ({} bytes)", r.max, r.min));
  }
  if (!(r.factor > 1)) throw std::invalid_argument(fmt::format("-f must be > 1, got {}", r.factor));
  return r;
}

cost::GemmShape shape(std::int64_t m, std::int64_t n, std::int64_t k, Dtype d,
                      std::int64_t batch = 1) {
  return cost::GemmShape{m, n, k, batch, d};
}

bool wants(const SweepOptions& o, OpFamily f) { return o.ops.count(f) > 0; }

void add_grid(std::vector<GemmCase>& out, const std::vector<std::int64_t>& ms,
              const std::vector<std::int64_t>& ns, const std::vector<std::int64_t>& ks, Dtype d) {
  for (auto m : ms)
    for (auto n : ns)
      for (auto k : ks) out.push_back(GemmCase{shape(m, n, k, d)});
}

std::vector<SolverCase> solver_cases(const MeasurementBackend& backend, bool quick) {
  std::vector<SolverCase> out;
  const bool cuda = backend.name() == "cuda";
  const std::vector<int> blocks = cuda ? (quick ? std::vector<int>{512, 1024}
                                                : std::vector<int>{256, 512, 1024, 2048})
                                       : std::vector<int>{32, 64};
  const std::vector<int> batches = cuda ? std::vector<int>{8, 32} : std::vector<int>{4};
  const std::vector<Dtype> dtypes =
      cuda && !quick ? std::vector<Dtype>{Dtype::kFp32, Dtype::kFp16} : std::vector<Dtype>{Dtype::kFp32};
  for (const char* solver : {"newton-db", "coupled-newton", "chebyshev", "evd"}) {
    const std::string name = solver;
    if (quick && cuda && name == "chebyshev") continue;
    const int iterations =
        name == "evd" ? 0 : name == "chebyshev" ? kChebyshevDegree : kNewtonIterations;
    for (Dtype d : dtypes) {
      if (name == "evd" && d != Dtype::kFp32) continue;
      for (int b : blocks)
        for (int n : batches) {
          SolverCase c{name, b, n, iterations, d, cuda};
          if (backend.has_solver(c)) out.push_back(c);
        }
    }
  }
  // Block by block, as Distributed Shampoo runs: the comparison of issue 7 at B = 1024, N = 32
  // on the GPU (the CPU cases above are already block by block).
  if (cuda) {
    for (const char* solver : {"newton-db", "coupled-newton"}) {
      SolverCase c{solver, 1024, 32, kNewtonIterations, Dtype::kFp32, false};
      if (backend.has_solver(c)) out.push_back(c);
    }
  }
  return out;
}

}  // namespace

const char* op_family_name(OpFamily family) {
  switch (family) {
    case OpFamily::kGemm: return "gemm";
    case OpFamily::kCollectives: return "collectives";
    case OpFamily::kSolvers: return "solvers";
    case OpFamily::kNorm: return "norm";
    case OpFamily::kLaunch: return "launch";
    case OpFamily::kOverlap: return "overlap";
  }
  return "?";
}

std::set<OpFamily> all_op_families() {
  return {OpFamily::kGemm, OpFamily::kCollectives, OpFamily::kSolvers, OpFamily::kNorm,
          OpFamily::kLaunch, OpFamily::kOverlap};
}

std::set<OpFamily> parse_op_families(const std::string& list) {
  std::set<OpFamily> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    const std::string item =
        list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    bool found = false;
    for (OpFamily f : all_op_families()) {
      if (item == op_family_name(f)) {
        out.insert(f);
        found = true;
      }
    }
    if (!found) {
      throw std::invalid_argument(fmt::format(
          "--ops: unknown measurement '{}' (expected a comma-separated list of gemm, "
          "collectives, solvers, norm, launch, overlap)", item));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<double> collective_sizes(double min_bytes, double max_bytes, double factor,
                                     int ranks) {
  const double unit = 4.0 * ranks;
  std::vector<double> out;
  for (double s = min_bytes; s <= max_bytes * (1 + 1e-12); s *= factor) {
    const double rounded = std::max(unit, std::floor(s / unit) * unit);
    if (out.empty() || rounded > out.back()) out.push_back(rounded);
  }
  return out;
}

SweepPlan make_sweep_plan(const MeasurementBackend& backend, const SweepOptions& o) {
  SweepPlan plan;
  const bool cuda = backend.name() == "cuda";
  if (wants(o, OpFamily::kGemm)) {
    for (Dtype d : backend.gemm_dtypes()) {
      if (!cuda) {
        add_grid(plan.gemms, {64, 128, 256, 512}, {64, 128, 256, 512}, {64, 256, 512}, d);
      } else if (!o.quick) {
        const std::vector<std::int64_t> g{512, 1024, 2048, 4096, 8192, 16384};
        add_grid(plan.gemms, g, g, g, d);
      } else if (d == Dtype::kBf16) {
        add_grid(plan.gemms, {1024, 4096, 16384}, {1024, 4096, 16384}, {256, 1024, 4096, 16384},
                 d);
      } else {
        add_grid(plan.gemms, {1024, 4096}, {1024, 4096}, {1024, 4096}, d);
      }
    }
    const std::vector<std::int64_t> square = cuda ? std::vector<std::int64_t>{256, 1024}
                                                  : std::vector<std::int64_t>{32, 64};
    for (auto b : square)
      for (std::int64_t batch : {8, 32}) plan.gemms.push_back(GemmCase{shape(b, b, b, Dtype::kFp32, batch)});
  }
  if (wants(o, OpFamily::kCollectives) && backend.has_collectives()) {
    const ByteRange r = byte_range(backend, o);
    const int ranks = backend.placement().size;
    for (CollectiveKind kind : kKinds)
      for (bool in_place : {false, true})
        for (double s : collective_sizes(r.min, r.max, r.factor, ranks))
          plan.collectives.push_back(CollectiveCase{kind, cost::Bytes{s}, in_place});
  }
  if (wants(o, OpFamily::kSolvers)) plan.solvers = solver_cases(backend, o.quick);
  if (wants(o, OpFamily::kNorm)) {
    const std::vector<std::int64_t> rows =
        cuda ? (o.quick ? std::vector<std::int64_t>{16384}
                        : std::vector<std::int64_t>{4096, 16384, 65536})
             : std::vector<std::int64_t>{256, 1024};
    const std::vector<std::int64_t> hidden =
        cuda ? std::vector<std::int64_t>{4096, 8192} : std::vector<std::int64_t>{1024};
    for (auto r : rows)
      for (auto h : hidden)
        for (bool fused : {false, true}) plan.norms.push_back(NormCase{r, h, fused});
  }
  plan.launch = wants(o, OpFamily::kLaunch) && backend.has_launch_overhead();
  if (wants(o, OpFamily::kOverlap) && backend.has_overlap()) {
    plan.overlaps.push_back(OverlapCase{shape(8192, 8192, 8192, Dtype::kBf16),
                                        cost::Bytes{256 * kMiB}});
  }
  return plan;
}

SweepPlan make_check_plan(const MeasurementBackend& backend, const SweepOptions& o) {
  SweepPlan plan;
  const bool cuda = backend.name() == "cuda";
  if (wants(o, OpFamily::kGemm)) {
    // Geometric midpoints of the fit grid, inside its box.
    const Dtype d = cuda ? Dtype::kBf16 : Dtype::kFp32;
    if (cuda) {
      add_grid(plan.gemms, {2048, 8192}, {2048, 8192}, {2048, 8192}, d);
    } else {
      add_grid(plan.gemms, {96, 384}, {96, 384}, {128, 384}, d);
    }
  }
  if (wants(o, OpFamily::kCollectives) && backend.has_collectives()) {
    const ByteRange r = byte_range(backend, o);
    const int ranks = backend.placement().size;
    const std::vector<double> grid = collective_sizes(r.min, r.max, r.factor, ranks);
    for (CollectiveKind kind : kKinds) {
      for (std::size_t i = 0; i + 1 < grid.size(); i += 2) {
        const double mid = std::sqrt(grid[i] * grid[i + 1]);
        const auto sizes = collective_sizes(mid, mid, 2, ranks);
        if (sizes.front() > grid[i] && sizes.front() < grid[i + 1]) {
          plan.collectives.push_back(CollectiveCase{kind, cost::Bytes{sizes.front()}, false});
        }
      }
    }
  }
  if (wants(o, OpFamily::kSolvers)) {
    SolverCase c = cuda ? SolverCase{"newton-db", 768, 16, kNewtonIterations, Dtype::kFp32, true}
                        : SolverCase{"newton-db", 48, 4, kNewtonIterations, Dtype::kFp32, false};
    if (backend.has_solver(c)) plan.solvers.push_back(c);
  }
  if (wants(o, OpFamily::kNorm)) {
    plan.norms.push_back(cuda ? NormCase{32768, 6144, false} : NormCase{512, 1024, false});
  }
  return plan;
}

}  // namespace parasim::calib
