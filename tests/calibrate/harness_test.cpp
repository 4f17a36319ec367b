// The calibration harness with a scripted backend: plan sizes, incremental updates, fits, and
// what happens when a measurement fails.
#include <doctest/doctest.h>

#include <stdexcept>

#include "calibrate/harness.hpp"
#include "calibrate/single_process_group.hpp"
#include "calibrate/sweep_plan.hpp"

using namespace parasim;
using namespace parasim::calib;

namespace {

// A group of one: the harness's rank-0 logic without MPI.
const ProcessGroup& group() {
  static const SingleProcessGroup g("the harness tests run as one process");
  return g;
}

// Times are exact functions of the point, so the tables can be checked exactly:
// gemm 1 ns per 1000 FLOPs; collectives 2 us + S / 1 GB/s.
class ScriptedBackend final : public MeasurementBackend {
 public:
  bool fail_gemm = false;
  bool collectives = true;

  std::string name() const override { return "cpu"; }
  cost::Provenance provenance() const override {
    cost::Provenance p;
    p.backend = "scripted";
    p.device = "test device";
    return p;
  }
  cost::GroupPlacement placement() const override { return {2, 2, 1}; }
  std::vector<cost::Dtype> gemm_dtypes() const override { return {cost::Dtype::kFp32}; }
  bool has_collectives() const override { return collectives; }
  bool has_launch_overhead() const override { return true; }
  bool has_overlap() const override { return false; }
  bool has_solver(const SolverCase& c) const override { return !c.batched; }

  cost::MeasuredTime gemm(const GemmCase& c, const kernels::TimingOptions&) override {
    if (fail_gemm) throw std::runtime_error("out of memory");
    const double t = c.shape.flops().value * 1e-12;
    return {t, t, t, 1};
  }
  cost::MeasuredTime solver(const SolverCase& c, const kernels::TimingOptions&) override {
    const double t = 1e-6 * c.block * c.batch;
    return {t, t, t, 1};
  }
  cost::NormPoint norm(const NormCase& c, const kernels::TimingOptions&) override {
    cost::NormPoint p;
    p.rows = c.rows;
    p.hidden = c.hidden;
    p.moved = cost::Bytes{8.0 * static_cast<double>(c.rows * c.hidden)};
    p.time = {1e-3, 1e-3, 1e-3, 1};
    return p;
  }
  cost::MeasuredTime launch_overhead(const kernels::TimingOptions&) override {
    return {4e-6, 4e-6, 4e-6, 1};
  }
  cost::CollectivePoint collective(cost::CollectiveKind, cost::Bytes message, bool in_place,
                                   const kernels::TimingOptions&) override {
    const double t = 2e-6 + message.value / 1e9;
    return cost::CollectivePoint{message, in_place, {t, t, t, 1}, true};
  }
  cost::OverlapPoint overlap(const OverlapCase&, const kernels::TimingOptions&) override {
    return {};
  }
};

}  // namespace

TEST_CASE("Sweep plan: nccl-tests sizes rounded to whole fp32 blocks per rank") {
  // 4 ranks: multiples of 16 bytes, never below 16.
  CHECK(collective_sizes(8, 100, 2, 4) == std::vector<double>{16, 32, 64});
  CHECK(collective_sizes(1024, 4096, 2, 2) == std::vector<double>{1024, 2048, 4096});
  CHECK_THROWS_WITH_AS(parse_op_families("gemm,colectives"),
                       doctest::Contains("unknown measurement 'colectives'"),
                       std::invalid_argument);
  CHECK(parse_op_families("gemm,norm").size() == 2);
}

TEST_CASE("Sweep plan: --ops and capabilities select the families; held-out points differ") {
  ScriptedBackend b;
  SweepOptions o;
  o.quick = true;
  const SweepPlan all = make_sweep_plan(b, o);
  CHECK(all.gemms.size() == 48 + 4);                  // 4 x 4 x 3 grid + 4 batched squares
  CHECK(all.collectives.size() == 6 * 2 * 6);         // kinds x in/out of place x 4K..4M by 4
  CHECK(all.launch);
  o.ops = parse_op_families("gemm");
  const SweepPlan gemm_only = make_sweep_plan(b, o);
  CHECK(gemm_only.collectives.empty());
  CHECK(gemm_only.size() == gemm_only.gemms.size());
  SweepOptions quick;
  quick.quick = true;
  const SweepPlan held_out = make_check_plan(b, quick);
  for (const auto& h : held_out.gemms) {
    for (const auto& g : all.gemms) CHECK_FALSE(h.shape == g.shape);
  }
  for (const auto& h : held_out.collectives) {
    for (const auto& c : all.collectives) CHECK(h.message.value != c.message.value);
  }
}

TEST_CASE("Harness: every point is reported as it is measured; the last update is complete") {
  ScriptedBackend b;
  SweepOptions o;
  o.quick = true;
  o.ops = parse_op_families("gemm,collectives,launch");
  o.max_bytes = 64 * 1024;
  const SweepPlan plan = make_sweep_plan(b, o);
  Progress silent(nullptr, false, plan.size());
  std::vector<std::size_t> points_seen;
  int complete_updates = 0;
  const cost::MeasuredTables t = run_calibration(
      b, group(), plan, kernels::TimingOptions{}, b.provenance(), silent,
      [&](const cost::MeasuredTables& tables) {
        std::size_t n = tables.gemm.size() + (tables.launch_overhead ? 1 : 0);
        for (const auto& s : tables.collectives) n += s.points.size();
        points_seen.push_back(n);
        complete_updates += tables.complete ? 1 : 0;
      });
  // One update before the first point, one per point, one when complete.
  REQUIRE(points_seen.size() == plan.size() + 2);
  for (std::size_t i = 1; i + 1 < points_seen.size(); ++i) CHECK(points_seen[i] == i);
  CHECK(complete_updates == 1);
  CHECK(t.complete);
  CHECK(t.provenance.device == "test device");
  REQUIRE(t.collectives.size() == 6);
  for (const auto& s : t.collectives) {
    REQUIRE(s.fit);
    // The scripted times are exactly alpha + beta S: the fit recovers them.
    CHECK(s.fit->alpha_s == doctest::Approx(2e-6).epsilon(1e-6).scale(0));
    CHECK(s.fit->beta_s_per_byte == doctest::Approx(1e-9).epsilon(1e-6).scale(0));
  }
}

TEST_CASE("Harness: a failed measurement names the point and keeps what was measured") {
  ScriptedBackend b;
  b.fail_gemm = true;
  SweepOptions o;
  o.quick = true;
  o.ops = parse_op_families("launch,gemm");
  const SweepPlan plan = make_sweep_plan(b, o);
  Progress silent(nullptr, false, plan.size());
  cost::MeasuredTables last;
  CHECK_THROWS_WITH_AS(run_calibration(b, group(), plan, kernels::TimingOptions{},
                                       b.provenance(), silent,
                                       [&](const cost::MeasuredTables& t) { last = t; }),
                       doctest::Contains("gemm 64x64x64 fp32: out of memory"), std::runtime_error);
  CHECK(last.launch_overhead.has_value());  // measured before the failure, written
  CHECK_FALSE(last.complete);
}
