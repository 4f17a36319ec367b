// Closed-form pipeline bubbles: with equal stage times and free communication, GPipe and 1F1B
// leave each stage idle (P-1)/(m+P-1) of the pipeline time (Huang et al. 2019, arXiv 1811.06965;
// Narayanan et al. 2021, arXiv 2104.04473). Tolerance 1e-9 absolute.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "costmodel/cost_model.hpp"
#include "equal_stages.hpp"
#include "report/step_report.hpp"
#include "sim/engine.hpp"
#include "strategies/layers/layer_program.hpp"
#include "strategies/workload/workload_builder.hpp"

using namespace parasim;

namespace {

strat::StepReport simulate_equal_stages(strat::PipelineSchedule schedule, int p, int m) {
  return test::simulate_with(test::equal_stage_scenario(schedule, p, m)).report;
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
        CHECK(r.pipeline_time_s == doctest::Approx((m + p - 1) * 18e-6).epsilon(1e-9).scale(0));
      }
    }
  }
}
