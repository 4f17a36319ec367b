#pragma once
// parasim::calib SweepPlan — which points one calibration run measures, and which points
// `--check` holds out of the fit.
//
// Fit points (make_sweep_plan) form grids in log space so that the cost model's interpolation
// (log-log for collectives, log-space inverse-distance weighting for GEMMs) has neighbours on
// both sides; held-out points (make_check_plan) sit between grid points (geometric midpoints), so
// `parasim calibrate --check` measures exactly the interpolation error users get.
//
// Collective sizes follow nccl-tests' -b (min bytes), -e (max bytes), -f (factor): S = b, b f,
// b f^2, ... <= e, each rounded down to a multiple of 4 x ranks bytes (fp32 elements, equal
// per-rank blocks for the gathered kinds) and at least that. Defaults (bytes, factor):
//   cuda: 1 KiB .. 1 GiB x 2 (--quick: 64 KiB .. 256 MiB x 4)
//   cpu:  1 KiB .. 64 MiB x 2 (--quick: 4 KiB .. 4 MiB x 4)
// Every collective kind is measured in place and out of place.
// GEMM grids (dtypes from the backend; m: tokens, n and k: hidden sizes):
//   cuda: m, n, k in {512, 1024, 2048, 4096, 8192, 16384}; --quick: m, n in {1024, 4096, 16384},
//         k in {256, 1024, 4096, 16384}, bf16 only, and {1024, 4096}^3 for each other dtype
//   cpu:  m, n in {64, 128, 256, 512}, k in {64, 256, 512}; --quick the same
// plus batched square GEMMs (the solvers' shapes) in fp32.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "calibrate/backend.hpp"

namespace parasim::calib {

enum class OpFamily { kGemm, kCollectives, kSolvers, kNorm, kLaunch, kOverlap };
// "gemm", "collectives", "solvers", "norm", "launch", "overlap".
const char* op_family_name(OpFamily family);
// Parses a comma-separated list of family names; throws std::invalid_argument naming an unknown
// one and listing the valid names.
std::set<OpFamily> parse_op_families(const std::string& list);
std::set<OpFamily> all_op_families();

struct SweepOptions {
  bool quick = false;
  std::set<OpFamily> ops = all_op_families();
  std::optional<double> min_bytes;  // -b
  std::optional<double> max_bytes;  // -e
  std::optional<double> factor;     // -f (> 1)
};

struct CollectiveCase {
  cost::CollectiveKind kind = cost::CollectiveKind::kAllReduce;
  cost::Bytes message;
  bool in_place = false;
};

struct SweepPlan {
  std::vector<GemmCase> gemms;
  std::vector<CollectiveCase> collectives;
  std::vector<SolverCase> solvers;
  std::vector<NormCase> norms;
  bool launch = false;
  std::vector<OverlapCase> overlaps;

  std::size_t size() const {
    return gemms.size() + collectives.size() + solvers.size() + norms.size() + (launch ? 1 : 0) +
           overlaps.size();
  }
};

// Throws std::invalid_argument for min_bytes <= 0, max_bytes < min_bytes or factor <= 1.
SweepPlan make_sweep_plan(const MeasurementBackend& backend, const SweepOptions& options);
SweepPlan make_check_plan(const MeasurementBackend& backend, const SweepOptions& options);

// The message sizes of a collective sweep for `ranks` ranks (see the rounding rule above).
std::vector<double> collective_sizes(double min_bytes, double max_bytes, double factor, int ranks);

}  // namespace parasim::calib
