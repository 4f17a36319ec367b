// make_cost_model with measured tables: launch overhead and memory efficiency from measurements
// (explicit overrides win), overlap slowdowns, device-name check; without tables nothing moves.
#include "costmodel/measured_scalars.hpp"

#include <doctest/doctest.h>

#include "costmodel/cluster_presets.hpp"
#include "costmodel/measured_gemm_model.hpp"
#include "costmodel/profile.hpp"

using namespace parasim;
using namespace parasim::cost;

namespace {

MeasuredTime mt(double t) {
  return MeasuredTime{t, t, t, 20};
}

bool has_warning(const CostWarnings& w, const std::string& text) {
  for (const auto& line : w.list()) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

ClusterSpec h100() {
  return find_cluster_preset("dgx-h100")->spec;
}

}  // namespace

TEST_CASE("Measured launch overhead replaces the device's, unless the profile sets it") {
  Profile p;
  p.measured.launch_overhead = mt(7e-6);
  CHECK(make_cost_model(h100(), &p).device().kernel_launch_overhead == sim::Time::us(7));
  const GemmShape s{4096, 4096, 4096, 1, Dtype::kBf16};
  const CostModel costs = make_cost_model(h100(), &p);
  CHECK(costs.gemm(s) == costs.gemm_model().gemm_time(s) + sim::Time::us(7));
  p.kernel_launch_overhead = sim::Time::us(3);
  CHECK(make_cost_model(h100(), &p).device().kernel_launch_overhead == sim::Time::us(3));
}

TEST_CASE("Memory efficiency from the largest plain RMSNorm point, clamped to 1") {
  const ClusterSpec c = h100();
  const double hbm = c.device.hbm_bandwidth.bytes_per_s;
  Profile p;
  // Plain: 1e9 bytes at 60 % of HBM (the largest plain point); small plain at 30 %; a larger
  // fused point at 90 %, which does not count.
  p.measured.norms.push_back({8192, 8192, false, Bytes{1e9}, mt(1e9 / (0.6 * hbm))});
  p.measured.norms.push_back({1024, 1024, false, Bytes{1e6}, mt(1e6 / (0.3 * hbm))});
  p.measured.norms.push_back({16384, 8192, true, Bytes{2e9}, mt(2e9 / (0.9 * hbm))});
  const CostModel costs = make_cost_model(c, &p);
  CHECK(costs.memory_efficiency() == doctest::Approx(0.6).epsilon(1e-12).scale(0));
  CHECK(costs.memory_bound(Bytes{1e9}) ==
        memory_bound_time(Bytes{1e9}, c.device, costs.memory_efficiency()) +
            c.device.kernel_launch_overhead);
  p.memory_efficiency = 0.5;  // explicit wins
  CHECK(make_cost_model(c, &p).memory_efficiency() == 0.5);

  Profile fast;
  fast.measured.norms.push_back({8192, 8192, false, Bytes{1e9}, mt(1e9 / (1.2 * hbm))});
  const CostModel clamped = make_cost_model(c, &fast);
  CHECK(clamped.memory_efficiency() == 1.0);
  CHECK(has_warning(clamped.warnings(), "memory efficiency clamped to 1"));
}

TEST_CASE("Overlap slowdowns: median ratio overlapped / alone, at least 1") {
  std::vector<OverlapPoint> points;
  const GemmShape g{8192, 8192, 8192, 1, Dtype::kBf16};
  points.push_back({g, Bytes{1e8}, 1.0, 1.1, 2.0, 2.8});
  points.push_back({g, Bytes{1e9}, 1.0, 1.3, 2.0, 2.4});
  CHECK(compute_slowdown_when_overlapped(points) == doctest::Approx(1.2).scale(0));
  CHECK(communication_slowdown_when_overlapped(points) == doctest::Approx(1.3).scale(0));
  points.push_back({g, Bytes{1e9}, 1.0, 0.9, 2.0, 1.0});  // faster overlapped: counts, median 1.1
  CHECK(compute_slowdown_when_overlapped(points) == doctest::Approx(1.1).scale(0));
  CHECK(communication_slowdown_when_overlapped(points) == doctest::Approx(1.2).scale(0));
  CHECK(compute_slowdown_when_overlapped({}) == 1.0);
  std::vector<OverlapPoint> faster{{g, Bytes{1e9}, 1.0, 0.9, 2.0, 1.0}};
  CHECK(compute_slowdown_when_overlapped(faster) == 1.0);

  Profile p;
  p.measured.overlap = points;
  const CostModel costs = make_cost_model(h100(), &p);
  CHECK(costs.compute_slowdown_when_overlapped() == doctest::Approx(1.1).scale(0));
  CHECK(costs.communication_slowdown_when_overlapped() == doctest::Approx(1.2).scale(0));
  // Without measurements: the published default for compute (Lee et al., cost_model.hpp), none
  // for communication; a profile with other tables but no overlap points keeps them.
  CHECK(CostModel(h100()).compute_slowdown_when_overlapped() == 1.189);
  CHECK(CostModel(h100()).communication_slowdown_when_overlapped() == 1.0);
  Profile other;
  other.measured.launch_overhead = mt(4e-6);
  CHECK(make_cost_model(h100(), &other).compute_slowdown_when_overlapped() == 1.189);
  CHECK(make_cost_model(h100(), &other).communication_slowdown_when_overlapped() == 1.0);
}

TEST_CASE("make_cost_model: the measured GEMM model only with GEMM points; device name check") {
  Profile p;
  p.measured.launch_overhead = mt(4e-6);
  p.measured.provenance.device = "NVIDIA A100-SXM4-80GB";  // another model (applied as allowed)
  const CostModel roofline = make_cost_model(h100(), &p);
  CHECK(dynamic_cast<const RooflineGemmModel*>(&roofline.gemm_model()) != nullptr);
  CHECK(has_warning(roofline.warnings(), "measured on \"NVIDIA A100-SXM4-80GB\""));

  p.measured.provenance.device = "NVIDIA H100 80GB HBM3";  // CUDA's name of the model: no warning
  p.measured.gemm.push_back({{1024, 1024, 1024, 1, Dtype::kBf16}, false, false, mt(1e-5)});
  const CostModel measured = make_cost_model(h100(), &p);
  CHECK(dynamic_cast<const MeasuredGemmModel*>(&measured.gemm_model()) != nullptr);
  CHECK(measured.warnings().empty());
}

TEST_CASE("make_cost_model without measured tables is the analytical model, bit for bit") {
  const ClusterSpec c = h100();
  Profile p;
  p.gemm.ceiling = 0.7;
  p.memory_efficiency = 0.9;
  const CostModel a = make_cost_model(c, &p);
  const CostModel b(c, p.gemm, 0.9);
  const GemmShape s{3000, 5000, 700, 2, Dtype::kBf16};
  CHECK(a.gemm(s) == b.gemm(s));
  CHECK(a.memory_bound(Bytes{12345}) == b.memory_bound(Bytes{12345}));
  const auto pa = a.collective(CollectiveKind::kAllReduce, Bytes{1e6}, {8, 8, 1});
  CHECK(estimate_time(pa, c) ==
        estimate_time(plan_collective(CollectiveKind::kAllReduce, Bytes{1e6}, {8, 8, 1}, c), c));
  CHECK(!a.measured_solver_time("newton-db", 1024, 1, 10, Dtype::kFp32, true));
  CHECK(a.warnings().empty());
}
