#pragma once
// parasim::cost measured tables — what `parasim calibrate` measured, as held in a version 2
// profile (docs/profile.md) and read back by the cost model.
//
// Every time is the median of the samples, in seconds, with its 20th and 80th percentiles
// (as Triton's do_bench reports, triton-lang/triton python/triton/testing.py). Shapes and sizes use the cost model's own conventions: GemmShape
// (compute_cost.hpp) and nccl-tests message sizes (collective_cost.hpp). The raw points are kept;
// fits are stored beside them, never instead of them.
//
// Invariants (checked when a profile is read, costmodel/measured_tables_reader.hpp): times > 0
// and p20 <= median <= p80, samples >= 1; GEMM dimensions >= 1; a collective series has one
// (kind, placement), no other series has the same, and its out-of-place points and its in-place
// points each strictly increase in message size (> 0); a fit has alpha_s >= 0 and
// beta_s_per_byte >= 0; solver and norm points have positive sizes (iterations >= 1 for the
// iterative solvers, 0 allowed for "evd"); overlap times > 0.
//
// The JSON form of each struct (the "measurements" object of a version 2 profile) is listed in
// docs/profile.md; field names there are the member names here, times keep their "_s" suffix.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/collective_cost.hpp"
#include "costmodel/compute_cost.hpp"

namespace parasim::cost {

// What a measured table may hold (checked by measured_tables_reader.hpp, and by every writer of
// a profile so that what it writes reads back): times up to 1e5 s (far above any kernel or
// collective, inside sim::Time's range) and dimensions (GEMM m, n, k, batch; norm rows and
// hidden) up to 2^40.
inline constexpr double kMaxMeasuredSeconds = 1e5;
inline constexpr std::int64_t kMaxMeasuredDim = std::int64_t{1} << 40;

struct MeasuredTime {
  double median_s = 0;
  double p20_s = 0;
  double p80_s = 0;
  int samples = 0;

  bool operator==(const MeasuredTime&) const = default;
};

struct GemmPoint {
  GemmShape shape;
  bool transpose_a = false;
  bool transpose_b = false;
  MeasuredTime time;

  bool operator==(const GemmPoint&) const = default;
};

struct CollectivePoint {
  Bytes message;  // nccl-tests S
  bool in_place = false;
  MeasuredTime time;  // the slowest rank's median, as nccl-tests reports
  bool correct = true;

  bool operator==(const CollectivePoint&) const = default;
};

// t(S) = alpha + beta * S, least squares on the measured medians (calibrate/fit.hpp).
struct AlphaBeta {
  double alpha_s = 0;          // seconds
  double beta_s_per_byte = 0;  // seconds per byte (1 / bandwidth)

  bool operator==(const AlphaBeta&) const = default;
};

struct CollectiveSeries {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  GroupPlacement group;
  std::vector<CollectivePoint> points;  // increasing message; in-place and out-of-place apart
  std::optional<AlphaBeta> fit;

  bool operator==(const CollectiveSeries&) const = default;
};

struct SolverPoint {
  std::string solver;   // "newton-db", "coupled-newton", "chebyshev", "evd"
  int block = 0;        // B
  int batch = 0;        // N blocks in the stack
  int iterations = 0;   // per run (Newton), degree (Chebyshev), 0 (EVD)
  Dtype dtype = Dtype::kFp32;
  bool batched = true;  // false: block by block
  MeasuredTime time;    // the whole stack

  bool operator==(const SolverPoint&) const = default;
};

struct NormPoint {
  std::int64_t rows = 0;
  std::int64_t hidden = 0;
  bool fused_statistic = false;
  Bytes moved;          // reads plus writes
  MeasuredTime time;

  bool operator==(const NormPoint&) const = default;
};

struct OverlapPoint {
  GemmShape gemm;
  Bytes allreduce_message;
  double gemm_alone_s = 0, gemm_overlapped_s = 0;
  double allreduce_alone_s = 0, allreduce_overlapped_s = 0;

  bool operator==(const OverlapPoint&) const = default;
};

// Where the numbers come from (printed by `parasim calibrate`, kept in the file).
struct Provenance {
  std::string backend;        // "cuda" or "cpu"
  std::string device;         // "NVIDIA H200", or the CPU model
  int device_count = 0;       // devices (GPUs) or MPI ranks measured together
  int ranks = 0;              // MPI ranks
  int nodes = 0;              // distinct hosts among the ranks
  std::string driver;         // versions as text, "" when not applicable
  std::string cuda;
  std::string cublas;
  std::string nccl;
  std::string mpi;
  std::string clocks;         // e.g. "sm 1980 MHz, memory 2619 MHz"
  std::string date;           // ISO 8601 UTC
  std::string command_line;
  std::string parasim_version;

  bool operator==(const Provenance&) const = default;
};

// Calls text(json_key, string member) or count(json_key, int member) for every Provenance field,
// in file order: the one list the profile reader and writer share. P is Provenance or const
// Provenance.
template <typename P, typename Text, typename Count>
void visit_provenance(P& p, Text&& text, Count&& count) {
  text("backend", p.backend);
  text("device", p.device);
  count("device_count", p.device_count);
  count("ranks", p.ranks);
  count("nodes", p.nodes);
  text("driver", p.driver);
  text("cuda", p.cuda);
  text("cublas", p.cublas);
  text("nccl", p.nccl);
  text("mpi", p.mpi);
  text("clocks", p.clocks);
  text("date", p.date);
  text("command_line", p.command_line);
  text("parasim_version", p.parasim_version);
}

struct MeasuredTables {
  Provenance provenance;
  bool complete = false;  // false while (or when) a calibration run was interrupted
  std::vector<GemmPoint> gemm;
  std::vector<CollectiveSeries> collectives;
  std::vector<SolverPoint> solvers;
  std::vector<NormPoint> norms;
  std::optional<MeasuredTime> launch_overhead;  // per kernel
  std::vector<OverlapPoint> overlap;

  bool operator==(const MeasuredTables&) const = default;

  bool empty() const {
    return gemm.empty() && collectives.empty() && solvers.empty() && norms.empty() &&
           !launch_overhead && overlap.empty();
  }
};

}  // namespace parasim::cost
