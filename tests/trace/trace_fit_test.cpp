// The fit of profiled ranks into measured tables, and the coverage it reports.
#include "calibrate/trace/trace_fit.hpp"

#include <doctest/doctest.h>

namespace parasim::calib::trace {
namespace {

TraceOp op(const std::string& name, std::vector<std::vector<std::int64_t>> dims,
           std::vector<std::string> types) {
  TraceOp o;
  o.name = name;
  o.input_dims = std::move(dims);
  o.input_types = std::move(types);
  return o;
}

TraceKernel kernel(KernelClass kind, double start, double dur, std::int64_t launch_op = -1) {
  TraceKernel k;
  k.name = "k";
  k.kind = kind;
  k.start_us = start;
  k.duration_us = dur;
  k.launch_op = launch_op;
  return k;
}

TraceKernel all_reduce(double start, double dur, std::int64_t elements, int group_size = 8,
                       std::vector<int> ranks = {}) {
  TraceKernel k = kernel(KernelClass::kCollective, start, dur);
  TraceCollective c;
  c.kind = cost::CollectiveKind::kAllReduce;
  c.in_elements = c.out_elements = elements;
  c.element_bytes = 2;
  c.group_size = group_size;
  c.group = "tp";
  c.ranks = std::move(ranks);
  k.collective = c;
  return k;
}

const std::vector<std::string> kBf16 = {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"};

}  // namespace

TEST_CASE("trace fit: GEMM shapes from the ops' input dims") {
  CHECK(gemm_shape_of(op("aten::mm", {{8, 1024}, {1024, 4096}}, kBf16)) ==
        cost::GemmShape{8, 4096, 1024, 1, cost::Dtype::kBf16});
  CHECK(gemm_shape_of(op("aten::addmm", {{4096}, {8, 1024}, {1024, 4096}}, kBf16)) ==
        cost::GemmShape{8, 4096, 1024, 1, cost::Dtype::kBf16});
  CHECK(gemm_shape_of(op("aten::bmm", {{32, 128, 64}, {32, 64, 256}}, {"float", "float"})) ==
        cost::GemmShape{128, 256, 64, 32, cost::Dtype::kFp32});
  CHECK(gemm_shape_of(op("aten::_scaled_mm", {{16, 32}, {32, 48}, {}, {}}, {"Float8_e4m3fn"}))
            ->dtype == cost::Dtype::kFp8);
  CHECK(!gemm_shape_of(op("aten::mm", {{8, 1024}, {512, 4096}}, kBf16)));  // k disagrees
  CHECK(!gemm_shape_of(op("aten::mm", {}, {})));
  CHECK(!gemm_shape_of(op("aten::linear", {{8, 1024}, {4096, 1024}}, kBf16)));
  // Beyond what a profile holds (measured_tables.hpp): not a point, so the profile reads back.
  const std::int64_t huge = cost::kMaxMeasuredDim + 1;
  CHECK(!gemm_shape_of(op("aten::mm", {{huge, 1024}, {1024, 4096}}, kBf16)));
}

TEST_CASE("trace fit: GEMM points are medians of the calls, split-K kernels summed per call") {
  RankTrace r;
  r.steps = 1;
  r.ops = {op("aten::mm", {{8, 1024}, {1024, 4096}}, kBf16),
           op("aten::mm", {{8, 1024}, {1024, 4096}}, kBf16),
           op("aten::mm", {{8, 4096}, {4096, 1024}}, kBf16), op("aten::relu", {{8}}, kBf16)};
  r.kernels = {kernel(KernelClass::kGemm, 0, 50, 0),   kernel(KernelClass::kGemm, 100, 60, 1),
               kernel(KernelClass::kGemm, 200, 40, 2), kernel(KernelClass::kGemm, 240, 5, 2),
               kernel(KernelClass::kGemm, 300, 7),     kernel(KernelClass::kMemoryBound, 400, 3, 3),
               kernel(KernelClass::kOther, 500, 2)};
  r.kernels[6].name = "mystery";
  const TraceFit fit = fit_traces({r}, {});
  REQUIRE(fit.tables.gemm.size() == 2);
  const cost::GemmPoint& a = fit.tables.gemm[0];  // (8, 1024, 4096): the first in key order
  CHECK(a.shape == cost::GemmShape{8, 1024, 4096, 1, cost::Dtype::kBf16});
  CHECK(a.time.median_s == doctest::Approx(45e-6).epsilon(1e-12));
  CHECK(a.time.samples == 1);
  const cost::GemmPoint& b = fit.tables.gemm[1];
  CHECK(b.shape == cost::GemmShape{8, 4096, 1024, 1, cost::Dtype::kBf16});
  CHECK(b.time.median_s == doctest::Approx(55e-6).epsilon(1e-12));
  CHECK(b.time.p20_s == doctest::Approx(52e-6).epsilon(1e-12));  // type-7 quantile of {50, 60}
  CHECK(b.time.p80_s == doctest::Approx(58e-6).epsilon(1e-12));
  const TraceCoverage& c = fit.coverage;
  CHECK(c.gpu_time_us == 167);
  CHECK(c.fitted_time_us == 155);
  CHECK(c.gemm_calls == 3);
  CHECK(c.gemm_kernels_without_shape == 1);
  CHECK(c.class_time_us[static_cast<std::size_t>(KernelClass::kGemm)] == 162);
  REQUIRE(c.other_kernels_us.size() == 1);
  CHECK(c.other_kernels_us[0] == std::pair<std::string, double>("mystery", 2));
}

TEST_CASE("trace fit: a collective's time is the shortest of its ranks' durations") {
  RankTrace r0, r1;
  r0.rank = 0;
  r1.rank = 1;
  r0.visible_devices = r1.visible_devices = 8;
  r0.kernels = {all_reduce(0, 100, 1 << 20), all_reduce(200, 30, 1 << 21)};
  r1.kernels = {all_reduce(0, 40, 1 << 20), all_reduce(200, 80, 1 << 21)};
  const TraceFit fit = fit_traces({r0, r1}, {});
  REQUIRE(fit.tables.collectives.size() == 1);
  const cost::CollectiveSeries& s = fit.tables.collectives[0];
  CHECK(s.kind == cost::CollectiveKind::kAllReduce);
  CHECK(s.group == cost::GroupPlacement{8, 8, 1});
  REQUIRE(s.points.size() == 2);
  CHECK(s.points[0].message.value == 2.0 * (1 << 20));
  CHECK(s.points[0].time.median_s == doctest::Approx(40e-6).epsilon(1e-12));
  CHECK(s.points[1].time.median_s == doctest::Approx(30e-6).epsilon(1e-12));
  CHECK(s.fit.has_value());
  CHECK(fit.coverage.collective_calls == 2);
  CHECK(fit.coverage.fitted_time_us == 250);

  SUBCASE("calls that differ between the ranks are left out, with a note") {
    r1.kernels[1] = all_reduce(200, 80, 1 << 22);
    const TraceFit odd = fit_traces({r0, r1}, {});
    CHECK(odd.coverage.collective_calls == 1);
    bool noted = false;
    for (const auto& n : odd.coverage.notes) noted |= n.find("1 collective calls differ") == 0;
    CHECK(noted);
  }
  SUBCASE("one rank: durations as upper bounds, said so") {
    const TraceFit one = fit_traces({r0}, {});
    CHECK(one.tables.collectives[0].points[0].time.median_s ==
          doctest::Approx(100e-6).epsilon(1e-12));
    bool noted = false;
    for (const auto& n : one.coverage.notes) noted |= n.find("upper bounds") != std::string::npos;
    CHECK(noted);
  }
}

TEST_CASE("trace fit: a group's placement from its ranks and the GPUs per node") {
  TraceCollective c;
  c.group_size = 16;
  c.ranks = {0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27};
  CHECK(placement_of(c, 8) == cost::GroupPlacement{16, 4, 4});
  c.ranks = {0, 1, 2, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};
  CHECK(!placement_of(c, 8));  // 3 on node 0, 8 on node 1, 5 on node 2
  c.ranks.clear();
  CHECK(placement_of(c, 8) == cost::GroupPlacement{16, 8, 2});
  c.group_size = 4;
  CHECK(placement_of(c, 8) == cost::GroupPlacement{4, 4, 1});
  c.group_size = 12;
  CHECK(!placement_of(c, 8));
}

TEST_CASE("trace fit: nothing to fit is an error, not an empty profile") {
  CHECK_THROWS_AS(fit_traces({}, {}), std::invalid_argument);
  RankTrace empty;
  CHECK_THROWS_AS(fit_traces({empty}, {}), std::invalid_argument);
}

}  // namespace parasim::calib::trace

#include "calibrate/trace/trace_pricing.hpp"
#include "costmodel/cluster_presets.hpp"

namespace parasim::calib::trace {

TEST_CASE("trace fit: a call missing from a rank that has its group is left out, with a note") {
  RankTrace r0, r1;
  r0.rank = 0;
  r1.rank = 1;
  r0.kernels = {all_reduce(0, 100, 1 << 20), all_reduce(200, 30, 1 << 21)};
  r1.kernels = {all_reduce(0, 40, 1 << 20)};
  const TraceFit fit = fit_traces({r0, r1}, {});
  CHECK(fit.coverage.collective_calls == 1);
  bool noted = false;
  for (const auto& n : fit.coverage.notes) noted |= n.find("1 collective calls are in some") == 0;
  CHECK(noted);
}

TEST_CASE("trace pricing: a matched collective is one call per rank and step") {
  RankTrace r0, r1;
  r0.rank = 0;
  r1.rank = 1;
  r0.steps = r1.steps = 1;
  r0.kernels = {all_reduce(0, 100, 1 << 20)};
  r1.kernels = {all_reduce(0, 40, 1 << 20)};
  const TraceFit fit = fit_traces({r0, r1}, {});
  const cost::CostModel costs(cost::find_cluster_preset("dgx-h100")->spec);
  const TracePricing p = price_traces({r0, r1}, fit, costs);
  REQUIRE(p.largest.size() == 1);
  CHECK(p.largest[0].calls == 1);
  CHECK(p.largest[0].measured_us == doctest::Approx(40));
  bool found = false;
  for (const auto& c : p.classes) {
    if (c.kind != KernelClass::kCollective) continue;
    found = true;
    CHECK(c.measured_us == doctest::Approx(70));         // each rank's own kernel time, averaged
    CHECK(c.priced_measured_us == doctest::Approx(40));  // the collective's time, once per rank
    CHECK(c.predicted_us > 0);
  }
  CHECK(found);
}

}  // namespace parasim::calib::trace

namespace parasim::calib::trace {

TEST_CASE("trace pricing: with traces of two groups, still one call per rank and step") {
  // tp 2 x dp 2: ranks 0 and 1 all-reduce in group "a", ranks 2 and 3 in group "b".
  std::vector<RankTrace> ranks(4);
  for (int r = 0; r < 4; ++r) {
    ranks[static_cast<std::size_t>(r)].rank = r;
    ranks[static_cast<std::size_t>(r)].steps = 1;
    TraceKernel k = all_reduce(0, 50 + 10 * r, 1 << 20, 2);
    k.collective->group = r < 2 ? "a" : "b";
    ranks[static_cast<std::size_t>(r)].kernels = {k};
  }
  const TraceFit fit = fit_traces(ranks, {});
  REQUIRE(fit.tables.collectives.size() == 1);
  CHECK(fit.tables.collectives[0].points[0].time.samples == 2);  // one per group
  const cost::CostModel costs(cost::find_cluster_preset("dgx-h100")->spec);
  const TracePricing p = price_traces(ranks, fit, costs);
  REQUIRE(p.largest.size() == 1);
  CHECK(p.largest[0].calls == 1);
}

}  // namespace parasim::calib::trace

#include "costmodel/profile.hpp"

namespace parasim::calib::trace {

TEST_CASE("trace fit: a norm call of one kernel is a norm point, and the run's streaming rate") {
  RankTrace r;
  r.steps = 1;
  r.ops = {op("aten::native_layer_norm", {{8, 2048, 4096}, {4096}, {4096}, {4096}},
              {"c10::BFloat16", "", "c10::BFloat16", "c10::BFloat16"}),
           op("aten::_fused_rms_norm", {{16384, 4096}, {4096}}, {"c10::BFloat16"}),
           op("aten::native_layer_norm", {{16384, 4096}, {4096}}, {"c10::BFloat16"})};
  r.kernels = {kernel(KernelClass::kMemoryBound, 0, 100, 0),
               kernel(KernelClass::kMemoryBound, 200, 90, 1),
               kernel(KernelClass::kMemoryBound, 400, 30, 2),  // a norm in two kernels: not fitted
               kernel(KernelClass::kMemoryBound, 440, 30, 2)};
  const auto n = norm_of(r.ops[0]);
  REQUIRE(n);
  CHECK(n->rows == 16384);
  CHECK(n->hidden == 4096);
  // Input and output, weight and bias, fp32 mean and rstd per row.
  CHECK(n->moved_bytes == 2.0 * 16384 * 4096 * 2 + 2.0 * 4096 * 2 + 8.0 * 16384);
  CHECK(norm_of(r.ops[1])->moved_bytes == 2.0 * 16384 * 4096 * 2 + 4096.0 * 2);
  CHECK(!norm_of(op("aten::native_layer_norm", {{16384, 4096}}, {})));
  // Rows whose product would overflow, or pass a profile's limit: no norm.
  CHECK(!norm_of(op("aten::native_layer_norm", {{1LL << 40, 1LL << 40, 4096}}, {"c10::BFloat16"})));
  CHECK(!norm_of(op("aten::native_layer_norm", {{-2, -8, 4096}}, {"c10::BFloat16"})));
  const TraceFit fit = fit_traces({r}, {});
  CHECK(fit.coverage.norm_calls == 2);
  // LayerNorm and RMSNorm of one shape move different bytes: two points.
  REQUIRE(fit.tables.norms.size() == 2);
  CHECK(fit.tables.norms[0].time.samples == 1);
  CHECK_FALSE(fit.tables.norms[0].fused_statistic);
  // The cost model takes its streaming efficiency from the largest norm point.
  cost::Profile profile;
  profile.measured = fit.tables;
  const cost::ClusterSpec& h100 = cost::find_cluster_preset("dgx-h100")->spec;
  const cost::CostModel costs = cost::make_cost_model(h100, &profile);
  const cost::NormPoint& p = fit.tables.norms[0].moved.value > fit.tables.norms[1].moved.value
                                 ? fit.tables.norms[0]
                                 : fit.tables.norms[1];
  CHECK(costs.memory_efficiency() ==
        doctest::Approx(p.moved.value / p.time.median_s / h100.device.hbm_bandwidth.bytes_per_s));
}

}  // namespace parasim::calib::trace
