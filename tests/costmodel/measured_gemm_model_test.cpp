// MeasuredGemmModel: exact at measured shapes, log-space inverse-distance interpolation of the
// roofline correction between them, warnings outside the measured box and for unmeasured dtypes.
#include "costmodel/measured_gemm_model.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/cost_model.hpp"

using namespace parasim;
using namespace parasim::cost;

namespace {

DeviceSpec h100() {
  return find_cluster_preset("dgx-h100")->spec.device;
}

bool rel_eq(double got, double want, double tol = 1e-9) {
  return std::abs(got - want) <= tol * std::abs(want);
}

bool has_warning(const CostWarnings& w, const std::string& text) {
  for (const auto& line : w.list()) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

// bf16 points on {1024, 4096}^3 whose measured time is the roofline's x 1 at k = 1024 and x 2
// at k = 4096.
std::vector<GemmPoint> grid_points() {
  const RooflineGemmModel roofline(h100());
  std::vector<GemmPoint> points;
  for (std::int64_t m : {1024, 4096}) {
    for (std::int64_t n : {1024, 4096}) {
      for (std::int64_t k : {1024, 4096}) {
        const GemmShape s{m, n, k, 1, Dtype::kBf16};
        const double t = roofline.gemm_time(s).to_seconds() * (k == 4096 ? 2.0 : 1.0);
        points.push_back({s, false, false, {t, t, t, 10}});
      }
    }
  }
  return points;
}

}  // namespace

TEST_CASE("Measured GEMM: a measured shape takes exactly its measured median") {
  auto warnings = std::make_shared<CostWarnings>();
  auto points = grid_points();
  points[3].time.median_s = 1.234567e-4;  // not the roofline's multiple: must come back as is
  points[3].time.p20_s = points[3].time.p80_s = points[3].time.median_s;
  const MeasuredGemmModel model(h100(), {}, points, warnings);
  for (const auto& p : points) {
    CHECK(model.gemm_time(p.shape) == sim::Time::seconds(p.time.median_s));
  }
  CHECK(warnings->empty());
}

TEST_CASE("Measured GEMM: between measured shapes the correction is a log-space IDW mean") {
  auto warnings = std::make_shared<CostWarnings>();
  const MeasuredGemmModel model(h100(), {}, grid_points(), warnings);
  const RooflineGemmModel& roofline = model.roofline();
  // k = 2048 is the log-midpoint of 1024 and 4096; the grid is symmetric about it, so the
  // weighted mean of ln 1 and ln 2 is ln sqrt(2).
  const GemmShape mid{1024, 1024, 2048, 1, Dtype::kBf16};
  CHECK(rel_eq(model.correction(mid), std::sqrt(2.0), 1e-12));
  // Times are whole picoseconds: equal to within the rounding of one.
  CHECK(std::abs(model.gemm_time(mid).to_seconds() -
                 roofline.gemm_time(mid).to_seconds() * std::sqrt(2.0)) <= 0.5e-12);
  // Nearer k = 1024: correction between 1 and sqrt(2).
  const GemmShape low{2048, 2048, 1200, 1, Dtype::kBf16};
  CHECK(model.correction(low) > 1.0);
  CHECK(model.correction(low) < std::sqrt(2.0));
  CHECK(warnings->empty());  // inside the box
  // efficiency() agrees with the time.
  const double eff = model.efficiency(mid);
  CHECK(rel_eq(
      eff, mid.flops().value / (h100().peak_bf16.flop_per_s * model.gemm_time(mid).to_seconds())));
  CHECK(eff <= 1.0);
}

TEST_CASE("Measured GEMM: outside the measured box a time with a warning; no dtype: roofline") {
  auto warnings = std::make_shared<CostWarnings>();
  const MeasuredGemmModel model(h100(), {}, grid_points(), warnings);
  const GemmShape big_k{1024, 1024, 16384, 1, Dtype::kBf16};
  CHECK(model.correction(big_k) > 1.0);  // nearest points are the x 2 ones
  CHECK(model.gemm_time(big_k) > sim::Time::zero());
  CHECK(has_warning(*warnings, "bf16 k = 16384 is outside the measured range [1024, 4096]"));
  const GemmShape batched{1024, 1024, 1024, 4, Dtype::kBf16};
  model.gemm_time(batched);
  CHECK(has_warning(*warnings, "bf16 batch = 4 is outside the measured range [1, 1]"));
  model.gemm_time(big_k);
  CHECK(warnings->size() == 2);  // deduplicated

  const GemmShape fp32{1024, 1024, 1024, 1, Dtype::kFp32};
  CHECK(model.gemm_time(fp32) == model.roofline().gemm_time(fp32));
  CHECK(has_warning(*warnings, "no measured fp32 GEMMs"));
}

TEST_CASE("Measured GEMM: a shape measured in several layouts uses NN") {
  auto warnings = std::make_shared<CostWarnings>();
  const GemmShape s{2048, 2048, 2048, 1, Dtype::kBf16};
  std::vector<GemmPoint> points{{s, true, false, {3e-4, 3e-4, 3e-4, 5}},
                                {s, false, false, {2e-4, 2e-4, 2e-4, 5}},
                                {s, false, true, {1e-4, 1e-4, 1e-4, 5}}};
  const MeasuredGemmModel model(h100(), {}, points, warnings);
  CHECK(model.gemm_time(s) == sim::Time::seconds(2e-4));
}

TEST_CASE("CostModel::gemm with a measured model adds the launch overhead once") {
  auto warnings = std::make_shared<CostWarnings>();
  const ClusterSpec cluster = find_cluster_preset("dgx-h100")->spec;
  auto model = std::make_shared<MeasuredGemmModel>(cluster.device, GemmEfficiencyParams{},
                                                   grid_points(), warnings);
  const CostModel costs(cluster, model, cluster.device.kernels.memory_streaming, {}, warnings);
  const GemmPoint p = grid_points()[0];
  CHECK(costs.gemm(p.shape) ==
        sim::Time::seconds(p.time.median_s) + cluster.device.kernel_launch_overhead);
  costs.gemm({1024, 1024, 1024, 1, Dtype::kFp16});
  CHECK(has_warning(costs.warnings(), "no measured fp16 GEMMs"));
}
