// Measured collectives: log-log interpolation of the raw points, alpha-beta extrapolation with
// warnings, and analytical plans calibrated to reproduce the measured time with true bytes.
#include "costmodel/measured_collectives.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/cost_model.hpp"
#include "costmodel/profile.hpp"

using namespace parasim;
using namespace parasim::cost;

namespace {

constexpr double kAlpha = 12e-6;
constexpr double kBeta = 1.0 / 150e9;
const GroupPlacement kNode{8, 8, 1};
const GroupPlacement kTwoNodes{16, 8, 2};

// Measured time of a series: alpha-beta with a protocol "bump" so that log-log interpolation and
// the fitted line differ.
double measured(double bytes) {
  const double bump = bytes >= 65536 && bytes <= 1048576 ? 1.3 : 1.0;
  return (kAlpha + kBeta * bytes) * bump;
}

CollectiveSeries series(CollectiveKind kind, GroupPlacement group, bool with_fit = true) {
  CollectiveSeries s;
  s.kind = kind;
  s.group = group;
  for (double b = 1024; b <= 1024.0 * 1024 * 1024; b *= 4) {
    const double t = measured(b);
    s.points.push_back({Bytes{b}, false, {t, t, t, 20}, true});
    // In-place points, 10 % slower: never used while out-of-place points exist.
    s.points.push_back({Bytes{b}, true, {1.1 * t, 1.1 * t, 1.1 * t, 20}, true});
  }
  if (with_fit) s.fit = AlphaBeta{kAlpha, kBeta};
  return s;
}

bool rel_eq(double got, double want, double tol = 1e-12) {
  return std::abs(got - want) <= tol * std::abs(want);
}

bool has_warning(const CostWarnings& w, const std::string& text) {
  for (const auto& line : w.list()) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

// The uncontended time of a calibrated plan equals t up to one picosecond per phase.
void check_calibrated(const CollectivePlan& plan, const ClusterSpec& cluster, double t) {
  const double got = estimate_time(plan, cluster).to_seconds();
  const double tolerance = std::max(1e-9 * t, 1e-12 * static_cast<double>(plan.phases.size()));
  CHECK_MESSAGE(std::abs(got - t) <= tolerance, "estimate " << got << " s, measured " << t << " s");
}

CostModel measured_model(const ClusterSpec& cluster, std::vector<CollectiveSeries> s) {
  MeasuredInputs in;
  in.collectives = std::make_shared<MeasuredCollectives>(std::move(s));
  return CostModel(cluster, std::make_shared<RooflineGemmModel>(cluster.device),
                   cluster.device.kernels.memory_streaming, std::move(in), nullptr);
}

}  // namespace

TEST_CASE("Measured collectives: exact at points, log-log between neighbours") {
  const MeasuredCollectives table({series(CollectiveKind::kAllReduce, kNode)});
  for (double b = 1024; b <= 1024.0 * 1024 * 1024; b *= 4) {
    const auto t = table.time(CollectiveKind::kAllReduce, kNode, Bytes{b});
    REQUIRE(t);
    CHECK(t->seconds == measured(b));
    CHECK(t->range == MeasuredRange::kInside);
  }
  // The geometric midpoint of two sizes gets the geometric mean of their times.
  const double lo = 16384, hi = 65536;
  const auto mid = table.time(CollectiveKind::kAllReduce, kNode, Bytes{std::sqrt(lo * hi)});
  REQUIRE(mid);
  CHECK(rel_eq(mid->seconds, std::sqrt(measured(lo) * measured(hi))));
  // Log-log: a quarter of the way in log S is a quarter of the way in log t.
  const double s = lo * std::pow(hi / lo, 0.25);
  CHECK(rel_eq(table.time(CollectiveKind::kAllReduce, kNode, Bytes{s})->seconds,
               measured(lo) * std::pow(measured(hi) / measured(lo), 0.25)));
  CHECK(!table.time(CollectiveKind::kAllGather, kNode, Bytes{s}));
  CHECK(!table.time(CollectiveKind::kAllReduce, kTwoNodes, Bytes{s}));
}

TEST_CASE("Measured collectives: in-place points only when there is no out-of-place point") {
  CollectiveSeries s = series(CollectiveKind::kAllGather, kNode);
  std::erase_if(s.points, [](const CollectivePoint& p) { return !p.in_place; });
  const MeasuredCollectives table({s});
  CHECK(table.time(CollectiveKind::kAllGather, kNode, Bytes{4096})->seconds ==
        1.1 * measured(4096));
}

TEST_CASE("Measured collectives: outside the range the alpha-beta fit, with a warning per edge") {
  const ClusterSpec cluster = find_cluster_preset("dgx-h100")->spec;
  const CostModel costs = measured_model(cluster, {series(CollectiveKind::kAllReduce, kNode)});
  const double small = 256, large = 4.0 * 1024 * 1024 * 1024;
  const auto plan_small = costs.collective(CollectiveKind::kAllReduce, Bytes{small}, kNode);
  check_calibrated(plan_small, cluster, kAlpha + kBeta * small);
  CHECK(has_warning(costs.warnings(),
                    "all-reduce on 8 GPUs (8 per node x 1 node): messages "
                    "below the measured range (1.000 KiB to 1.000 GiB) are "
                    "extrapolated with the alpha-beta fit"));
  CHECK(costs.warnings().size() == 1);
  const auto plan_large = costs.collective(CollectiveKind::kAllReduce, Bytes{large}, kNode);
  check_calibrated(plan_large, cluster, kAlpha + kBeta * large);
  CHECK(has_warning(costs.warnings(), "messages above the measured range"));
  CHECK(costs.warnings().size() == 2);
  costs.collective(CollectiveKind::kAllReduce, Bytes{4096}, kNode);  // inside: no warning
  CHECK(costs.warnings().size() == 2);

  // Without a fit: the line through the smallest and largest points.
  const MeasuredCollectives no_fit({series(CollectiveKind::kAllReduce, kNode, false)});
  const auto t = no_fit.time(CollectiveKind::kAllReduce, kNode, Bytes{large});
  REQUIRE(t);
  CHECK(!t->from_fit);
  const double s0 = 1024, s1 = 1024.0 * 1024 * 1024;
  const double beta = (measured(s1) - measured(s0)) / (s1 - s0);
  CHECK(rel_eq(t->seconds, measured(s0) - beta * s0 + beta * large));
}

TEST_CASE("Calibrated plans: same phases and true bytes, uncontended time = measured t(S)") {
  ClusterSpec cluster = find_cluster_preset("dgx-h100")->spec;
  cluster.nodes = 2;
  const CostModel costs = measured_model(cluster, {series(CollectiveKind::kAllReduce, kNode),
                                                   series(CollectiveKind::kAllReduce, kTwoNodes)});
  const MeasuredCollectives table(
      {series(CollectiveKind::kAllReduce, kNode), series(CollectiveKind::kAllReduce, kTwoNodes)});
  for (const GroupPlacement& g : {kNode, kTwoNodes}) {
    for (double b : {1024.0, 3000.0, 200e3, 1e6, 123456789.0, 1024.0 * 1024 * 1024}) {
      INFO("group " << g.size << ", " << b << " bytes");
      const auto plan = costs.collective(CollectiveKind::kAllReduce, Bytes{b}, g);
      const auto analytical = plan_collective(CollectiveKind::kAllReduce, Bytes{b}, g, cluster);
      REQUIRE(plan.phases.size() == analytical.phases.size());
      sim::Time latency;
      for (std::size_t i = 0; i < plan.phases.size(); ++i) {
        CHECK(plan.phases[i].bytes_sent_per_rank == analytical.phases[i].bytes_sent_per_rank);
        CHECK(plan.phases[i].link == analytical.phases[i].link);
        CHECK(plan.phases[i].steps == analytical.phases[i].steps);
        CHECK(plan.phases[i].link_efficiency == plan.phases[0].link_efficiency);  // uniform
        latency += plan.phases[i].latency;
      }
      const double t = table.time(CollectiveKind::kAllReduce, g, Bytes{b})->seconds;
      CHECK(latency == sim::Time::seconds(std::min(kAlpha, t)));
      check_calibrated(plan, cluster, t);
      CHECK(bytes_sent_per_rank(plan) == bytes_sent_per_rank(analytical));
    }
  }
  CHECK(costs.warnings().empty());
}

TEST_CASE("Calibrated plans: a time below alpha is all latency; zero analytical latency") {
  ClusterSpec cluster = find_cluster_preset("dgx-h100")->spec;
  cluster.intra_node.latency = sim::Time::zero();
  CollectiveSeries s = series(CollectiveKind::kAllGather, kNode);
  s.fit = AlphaBeta{1e-3, kBeta};  // alpha above every measured time
  const CostModel costs = measured_model(cluster, {s});
  const auto plan = costs.collective(CollectiveKind::kAllGather, Bytes{4096}, kNode);
  REQUIRE(plan.phases.size() == 1);
  CHECK(plan.phases[0].latency == sim::Time::seconds(measured(4096)));
  CHECK(std::isinf(plan.phases[0].link_efficiency));
  check_calibrated(plan, cluster, measured(4096));
}

TEST_CASE("No measured series for a placement: the analytical plan and a warning naming it") {
  ClusterSpec cluster = find_cluster_preset("dgx-h100")->spec;
  cluster.nodes = 2;
  const CostModel costs = measured_model(cluster, {series(CollectiveKind::kAllReduce, kNode)});
  const auto plan = costs.collective(CollectiveKind::kAllGather, Bytes{1e6}, kTwoNodes);
  const auto analytical = plan_collective(CollectiveKind::kAllGather, Bytes{1e6}, kTwoNodes, cluster);
  CHECK(estimate_time(plan, cluster) == estimate_time(analytical, cluster));
  CHECK(has_warning(costs.warnings(),
                    "no measured all-gather on 16 GPUs (8 per node x 2 nodes) in the profile"));
  // A group of one is free and asks nothing.
  costs.collective(CollectiveKind::kAllToAll, Bytes{1e6}, GroupPlacement{1, 1, 1});
  CHECK(costs.warnings().size() == 1);
}

TEST_CASE("Send/recv: a series of the same link class stands for a 2-GPU transfer") {
  const MeasuredCollectives table({series(CollectiveKind::kSendRecv, kNode)});
  CHECK(table.find(CollectiveKind::kSendRecv, GroupPlacement{2, 2, 1}) != nullptr);
  CHECK(table.find(CollectiveKind::kSendRecv, GroupPlacement{2, 1, 2}) == nullptr);
  CHECK(table.time(CollectiveKind::kSendRecv, GroupPlacement{2, 2, 1}, Bytes{4096})->seconds ==
        measured(4096));
}
