// Measured solver stacks scaled to other stacks: batch linear, block cubed, iterations linear
// (iterative solvers), nearest point, warnings when extrapolating.
#include "costmodel/measured_solvers.hpp"

#include <doctest/doctest.h>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/profile.hpp"

using namespace parasim;
using namespace parasim::cost;

namespace {

SolverPoint point(const char* solver, int block, int batch, int iterations, double t,
                  bool batched = true, Dtype dtype = Dtype::kFp32) {
  return SolverPoint{solver, block, batch, iterations, dtype, batched, {t, t, t, 10}};
}

}  // namespace

TEST_CASE("Solver time: exact at a point, scaled by batch, block^3 and iterations") {
  const std::vector<SolverPoint> pts{point("newton-db", 1024, 32, 10, 0.1),
                                     point("newton-db", 2048, 32, 10, 0.9),
                                     point("evd", 1024, 32, 0, 2.0)};
  auto t = [&](const char* solver, int block, int batch, int iterations) {
    return estimate_solver_time(pts, {solver, block, batch, iterations, Dtype::kFp32, true});
  };
  CHECK(t("newton-db", 1024, 32, 10)->seconds == 0.1);
  CHECK(!t("newton-db", 1024, 32, 10)->extrapolated);
  // Batch and iterations scale linearly from the nearest point.
  CHECK(t("newton-db", 1024, 64, 10)->seconds == doctest::Approx(0.2).scale(0));
  CHECK(t("newton-db", 1024, 64, 10)->extrapolated);  // batch 64 is above every measured batch
  CHECK(t("newton-db", 1024, 32, 5)->seconds == doctest::Approx(0.05).scale(0));
  // Block 1536 lies between the two blocks, nearer 2048 in the cubic metric: scaled from it.
  const auto mid = t("newton-db", 1536, 32, 10);
  CHECK(mid->from->block == 2048);
  CHECK(mid->seconds == doctest::Approx(0.9 * 0.75 * 0.75 * 0.75).scale(0));
  CHECK(!mid->extrapolated);
  // EVD has no iterations: they are ignored.
  CHECK(t("evd", 512, 32, 99)->seconds == doctest::Approx(2.0 / 8).scale(0));
  // Another solver, dtype or mode: nothing.
  CHECK(!t("chebyshev", 1024, 32, 10));
  CHECK(!estimate_solver_time(pts, {"newton-db", 1024, 32, 10, Dtype::kBf16, true}));
  CHECK(!estimate_solver_time(pts, {"newton-db", 1024, 32, 10, Dtype::kFp32, false}));
}

TEST_CASE("CostModel::measured_solver_time warns when it extrapolates") {
  Profile p;
  p.measured.solvers = {point("coupled-newton", 1024, 16, 10, 0.05, false)};
  const CostModel costs = make_cost_model(find_cluster_preset("dgx-h100")->spec, &p);
  CHECK(costs.measured_solver_time("coupled-newton", 1024, 16, 10, Dtype::kFp32, false) ==
        sim::Time::seconds(0.05));
  CHECK(costs.warnings().empty());
  CHECK(costs.measured_solver_time("coupled-newton", 512, 16, 10, Dtype::kFp32, false) ==
        sim::Time::seconds(0.05 / 8));
  REQUIRE(costs.warnings().size() == 1);
  CHECK(costs.warnings().list()[0].find(
            "coupled-newton (fp32, block by block) for block 512, batch 16") != std::string::npos);
  CHECK(!costs.measured_solver_time("coupled-newton", 512, 16, 10, Dtype::kFp32, true));
}
