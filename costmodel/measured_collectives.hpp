#pragma once
// parasim::cost measured collectives — collective times from measured nccl-tests-style series (a
// version 2 profile's "measurements.collectives", measured_tables.hpp), and analytical plans
// calibrated to reproduce them.
//
// Lookup: a series is found by (kind, placement): its kind and its group's size, GPUs per node
// and nodes must all equal the question's (no scaling between placements). One exception,
// send/recv: in nccl-tests' sendrecv_perf every rank sends S to one peer over one link whatever
// the group size, so when no series has the exact placement, a send/recv series of the same link
// class stands for it (all ranks in one node vs. spanning nodes; the smallest such group, the
// first on a tie). That is how a pipeline transfer between 2 GPUs uses a send/recv series
// measured over the 8 GPUs of a node.
//
// Predicted time t(S) of a series for a message of S bytes (nccl-tests S):
//   * The points used are the out-of-place ones; the in-place ones when the series has no
//     out-of-place point (nccl-tests measures both; frameworks mostly run out of place).
//   * Inside [S_min, S_max] of those points: log-log linear interpolation between the two
//     neighbouring points, ln t = ln t_i + (ln S - ln S_i) / (ln S_i+1 - ln S_i) x
//     (ln t_i+1 - ln t_i); exactly t_i at a measured size. (Raw points rather than the fit:
//     protocol and algorithm switches make one line off by up to ~2x mid-range: NCCL picks
//     the fastest algorithm and protocol per size, NVIDIA/nccl src/graph/tuning.cc.)
//   * Outside: the series' alpha-beta fit, t = alpha + beta S; without a fit, the line through
//     the smallest and largest points (beta and alpha clamped to >= 0). One warning per series
//     and side (below / above).
// The series' latency alpha (used to split a calibrated plan) is the fit's alpha, or that line's.
//
// Calibrated plan (calibrate_plan): the analytical plan of collective_cost.hpp keeps its phases,
// link classes and bytes_sent_per_rank (reports show true traffic); with L the sum of its phase
// latencies and B = sum over steps (collective_cost.hpp: concurrent phases form one step) of the
// largest bytes_sent_per_rank / bandwidth(link) of the step:
//   * latencies are scaled so that they sum to L' = min(alpha, t) (in proportion to the
//     analytical latencies; to the phases' steps when L == 0), rounded to picoseconds with the
//     rounding carried so the sum is exact;
//   * every phase that sends bytes gets the same link_efficiency = B / (t - L'), so the bandwidth
//     terms share t - L' (uniform across phases: the measurement cannot tell phases apart);
//     +infinity when t <= alpha (the bandwidth terms then take no time).
// Uncontended, estimate_time(plan) then equals t up to the picosecond rounding of each phase
// term (at most one picosecond per phase). Contention in the simulator still applies on top.

#include <optional>
#include <string>
#include <vector>

#include "costmodel/collective_cost.hpp"
#include "costmodel/measured_tables.hpp"

namespace parasim::cost {

enum class MeasuredRange { kInside, kBelow, kAbove };

struct MeasuredCollectiveTime {
  double seconds = 0;  // t(S)
  double alpha_s = 0;  // the series' latency (fit alpha, or the edge line's)
  MeasuredRange range = MeasuredRange::kInside;
  bool from_fit = false;  // outside the range: the fit (true) or the edge line (false)
  double min_bytes = 0, max_bytes = 0;  // the measured range of the points used
};

class MeasuredCollectives {
 public:
  // Throws std::invalid_argument for a series without points, a point whose bytes or median is
  // not > 0, or two series of the same (kind, placement).
  explicit MeasuredCollectives(std::vector<CollectiveSeries> series);

  // The series used for this kind and placement (see Lookup above), or nullptr.
  const CollectiveSeries* find(CollectiveKind kind, const GroupPlacement& group) const;
  // t(S) of that series; std::nullopt when there is none. message >= 0.
  std::optional<MeasuredCollectiveTime> time(CollectiveKind kind, const GroupPlacement& group,
                                             Bytes message) const;

 private:
  struct Prepared {
    CollectiveSeries series;
    std::vector<std::pair<double, double>> points;  // (bytes, seconds), increasing bytes
    AlphaBeta line;                                 // the fit, or the edge line
    bool has_fit = false;
  };
  const Prepared* prepared(CollectiveKind kind, const GroupPlacement& group) const;

  std::vector<Prepared> series_;
};

// Scales `plan`'s latencies and sets its phases' link_efficiency so that its uncontended time is
// target_s (header). alpha_s >= 0, target_s >= 0. A plan without phases is left as it is.
void calibrate_plan(CollectivePlan& plan, double target_s, double alpha_s,
                    const ClusterSpec& cluster);

// "all-reduce on 16 GPUs (8 per node x 2 nodes)", for warnings.
std::string describe_series(CollectiveKind kind, const GroupPlacement& group);

}  // namespace parasim::cost
