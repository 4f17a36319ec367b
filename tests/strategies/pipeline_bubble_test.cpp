// Closed-form pipeline bubbles: with equal stage times and free communication, GPipe and 1F1B
// leave each stage idle (P-1)/(m+P-1) of the pipeline time (Huang et al. 2019; Narayanan et al.
// 2021; seed-papers.md 5.1-5.2). Tolerance 1e-9 absolute.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "costmodel/cost_model.hpp"
#include "scenario_builder.hpp"
#include "sim/engine.hpp"
#include "strategies/layer_program.hpp"
#include "strategies/step_report.hpp"
#include "strategies/workload_builder.hpp"

using namespace parasim;

namespace {

// Every transformer-layer GEMM takes 1 us; the output head's GEMM (n = vocab) is free, so that
// every stage does the same work. Memory-bound kernels, launches and links are made free through
// the cluster description below.
class LayerOnlyGemms final : public cost::GemmCostModel {
 public:
  explicit LayerOnlyGemms(std::int64_t vocab) : vocab_(vocab) {}
  sim::Time gemm_time(const cost::GemmShape& s) const override {
    return s.n == vocab_ || s.m == vocab_ || s.k == vocab_ ? sim::Time::zero() : sim::Time::us(1);
  }
  double efficiency(const cost::GemmShape&) const override { return 1.0; }

 private:
  std::int64_t vocab_;
};

strat::StepReport simulate_equal_stages(strat::PipelineSchedule schedule, int p, int m) {
  auto sc = test::small_scenario(1, 1, p, m, 1);
  sc.model.layers = p;  // one layer per stage
  sc.model.vocab = 32003;  // a size no layer GEMM dimension has
  sc.parallel.schedule = schedule;
  sc.cluster.device.hbm_bandwidth = cost::Bandwidth{1e30};
  sc.cluster.device.kernel_launch_overhead = sim::Time::zero();
  sc.cluster.intra_node = {cost::Bandwidth{1e30}, sim::Time::zero()};
  sc.cluster.inter_node = {cost::Bandwidth{1e30}, sim::Time::zero()};
  const cost::CostModel costs(sc.cluster, std::make_shared<LayerOnlyGemms>(sc.model.vocab), 1.0);
  const auto built = strat::build_workload(sc, costs, {});
  const auto result = sim::Engine(built.workload).run();
  return strat::make_step_report(sc, built, result);
}

}  // namespace

TEST_CASE("GPipe and 1F1B bubble is (p-1)/(m+p-1) with equal stages and free communication") {
  for (auto schedule : {strat::PipelineSchedule::kGpipe, strat::PipelineSchedule::kOneFOneB}) {
    for (int p : {2, 4, 8, 16}) {
      for (int m : {1, 4, 8, 32, 64}) {
        CAPTURE(strat::schedule_name(schedule));
        CAPTURE(p);
        CAPTURE(m);
        const auto r = simulate_equal_stages(schedule, p, m);
        const double expected = static_cast<double>(p - 1) / (m + p - 1);
        REQUIRE(r.bubble_fraction.size() == static_cast<std::size_t>(p));
        for (double b : r.bubble_fraction) CHECK(std::abs(b - expected) < 1e-9);
        // 6 forward and 12 backward GEMMs per layer at 1 us: the pipeline time is exact too.
        CHECK(r.pipeline_time_s == doctest::Approx((m + p - 1) * 18e-6).epsilon(1e-9));
      }
    }
  }
}
