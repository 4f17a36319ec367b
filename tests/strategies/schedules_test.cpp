// Pipeline schedules beyond GPipe and 1F1B: closed forms with equal stages and free
// communication, staleness bounds, weight versions and activation memory. Sources:
// PACI (arXiv 2606.07881; ItayElam/PACI, DistPACI/Workers.py), interleaved 1F1B (arXiv 2104.04473),
// zero bubble (arXiv 2401.10241), PipeDream (arXiv 1806.03377) and PipeDream-2BW (arXiv 2006.09503).
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "equal_stages.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;
using strat::PipelineSchedule;

namespace {

// Unequal stages: stage s's layer GEMMs cost (1 + s % 3) us... keyed by nothing a GEMM shape
// carries, so instead every GEMM costs a different amount per shape kind; the stages differ by
// having the embedding (stage 0) and the head (last stage) cost real time.
class UnequalGemms final : public cost::GemmCostModel {
 public:
  sim::Time gemm_time(const cost::GemmShape& s) const override {
    return sim::Time::ns(static_cast<double>(s.m % 7 + s.n % 5 + s.k % 3 + 1) * 100.0 +
                         s.flops().value * 1e-9);
  }
  double efficiency(const cost::GemmShape&) const override { return 1.0; }
};

int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace

TEST_CASE("PACI: no micro-batch at stage s crosses more than ceil((P-s-1)/a) updates") {
  for (int p : {2, 4, 8, 16}) {
    for (int a : {1, 2, 4, 8, 16}) {
      for (bool unequal : {false, true}) {
        CAPTURE(p);
        CAPTURE(a);
        CAPTURE(unequal);
        auto sc = test::equal_stage_scenario(PipelineSchedule::kPaci, p, a);
        if (unequal) {
          sc.model.layers = 2 * p;  // the head and the embedding make the ends heavier
        }
        const auto s = unequal ? test::simulate_with(sc, std::make_shared<UnequalGemms>())
                               : test::simulate_with(sc);
        REQUIRE(s.report.staleness.size() == static_cast<std::size_t>(p));
        for (int st = 0; st < p; ++st) {
          CAPTURE(st);
          CHECK(s.report.staleness[static_cast<std::size_t>(st)].max <= ceil_div(p - st - 1, a));
          CHECK(s.report.weight_versions[static_cast<std::size_t>(st)] == 1);
        }
      }
    }
  }
}

TEST_CASE("PipeDream crosses exactly P-s-1 updates in steady state and holds P-s versions") {
  for (int p : {2, 4, 8}) {
    const int m = 4;
    const auto s = test::simulate_with(test::equal_stage_scenario(PipelineSchedule::kPipeDream, p, m));
    for (int st = 0; st < p; ++st) {
      CAPTURE(p);
      CAPTURE(st);
      const auto& stale = s.report.staleness[static_cast<std::size_t>(st)];
      CHECK(stale.max == p - st - 1);
      // Steady state: every micro-batch but the first P-s-1 (warm-up) crosses exactly P-s-1.
      int at_max = 0, total = 0;
      for (const auto& [crossed, count] : stale.histogram) {
        total += count;
        if (crossed == p - st - 1) at_max += count;
      }
      CHECK(at_max == total - (p - st - 1));
      CHECK(s.report.weight_versions[static_cast<std::size_t>(st)] == p - st);
    }
  }
}

TEST_CASE("PipeDream-2BW crosses exactly one update after its first group; flush schedules none") {
  const int p = 4, m = 4;
  const auto s =
      test::simulate_with(test::equal_stage_scenario(PipelineSchedule::kPipeDream2BW, p, m));
  for (int st = 0; st + 1 < p; ++st) {
    CAPTURE(st);
    const auto& stale = s.report.staleness[static_cast<std::size_t>(st)];
    CHECK(stale.max == 1);
    // The first group of m micro-batches ran on the initial weights; every later one crosses 1.
    REQUIRE(stale.histogram.size() == 2);
    CHECK(stale.histogram[0] == std::make_pair(0, m));
    CHECK(stale.histogram[1].first == 1);
    CHECK(s.report.weight_versions[static_cast<std::size_t>(st)] == 2);
  }
  for (auto flush : {PipelineSchedule::kGpipe, PipelineSchedule::kOneFOneB,
                     PipelineSchedule::kZbH1, PipelineSchedule::kZbH2}) {
    const auto f = test::simulate_with(test::equal_stage_scenario(flush, p, m));
    for (const auto& stale : f.report.staleness) CHECK(stale.max == 0);
    for (int v : f.report.weight_versions) CHECK(v == 1);
  }
}

TEST_CASE("Interleaved 1F1B: bubble (P-1)/(v m) of the ideal time") {
  // Per stage and micro-batch the ideal compute is v chunks x (t_F + t_B) = v x 18 us; the
  // pipeline time is m v 18 us x (1 + (P-1)/(v m)).
  for (int p : {2, 4}) {
    for (int v : {2, 3}) {
      for (int m : {p, 2 * p, 4 * p}) {
        CAPTURE(p);
        CAPTURE(v);
        CAPTURE(m);
        const auto s = test::simulate_with(
            test::equal_stage_scenario(PipelineSchedule::kInterleaved, p, m, 1, v));
        const double ideal = m * v * 18e-6;
        CHECK(s.report.pipeline_time_s ==
              doctest::Approx(ideal * (1.0 + (p - 1.0) / (v * m))).epsilon(1e-9).scale(0));
      }
    }
  }
}

TEST_CASE("Zero-bubble H1 and H2: bubbles (P-1)(tF+tB-tW) and (P-1)(tF+tB-2tW)") {
  // t_F = 6 us, t_B = 8 us, t_W = 4 us per layer, one layer per stage. The ideal time is
  // m (t_F + t_B + t_W); the formulas hold for m >= P (H1) and m >= 2P - 1 (H2).
  const double tf = 6e-6, tb = 8e-6, tw = 4e-6;
  for (int p : {2, 4, 8}) {
    for (int m : {2 * p, 4 * p}) {
      CAPTURE(p);
      CAPTURE(m);
      const double ideal = m * (tf + tb + tw);
      const auto h1 = test::simulate_with(test::equal_stage_scenario(PipelineSchedule::kZbH1, p, m));
      CHECK(h1.report.pipeline_time_s ==
            doctest::Approx(ideal + (p - 1) * (tf + tb - tw)).epsilon(1e-9).scale(0));
      const auto h2 = test::simulate_with(test::equal_stage_scenario(PipelineSchedule::kZbH2, p, m));
      CHECK(h2.report.pipeline_time_s ==
            doctest::Approx(ideal + (p - 1) * (tf + tb - 2 * tw)).epsilon(1e-9).scale(0));
    }
  }
}

TEST_CASE("PACI steady-state speedup over 1F1B-flush is (a+P-1)/a within 2%") {
  for (int p : {2, 4, 8}) {
    for (int a : {4, 8, 16}) {
      CAPTURE(p);
      CAPTURE(a);
      const auto paci = test::simulate_with(test::equal_stage_scenario(PipelineSchedule::kPaci, p, a));
      const auto flush =
          test::simulate_with(test::equal_stage_scenario(PipelineSchedule::kOneFOneB, p, a));
      const double speedup = flush.report.step_time_s / paci.report.step_time_s;
      CHECK(speedup == doctest::Approx((a + p - 1.0) / a).epsilon(0.02).scale(0));
    }
  }
}

TEST_CASE("PACI holds 1F1B-flush's peak activation memory on every stage; mem mode less") {
  auto sc = test::small_scenario(1, 1, 4, 8, 1, 4);
  sc.parallel.schedule = PipelineSchedule::kOneFOneB;
  const auto flush = test::simulate_report(sc);
  sc.parallel.schedule = PipelineSchedule::kPaci;
  const auto paci = test::simulate_report(sc);
  sc.parallel.paci_mode = strat::PaciMode::kMem;
  const auto mem = test::simulate_report(sc);
  auto activations = [](const strat::DeviceMemory& m) {
    for (const auto& [name, bytes] : m.breakdown_bytes) {
      if (name == "activations") return bytes;
    }
    return -1.0;
  };
  for (std::size_t st = 0; st < 4; ++st) {
    CAPTURE(st);
    CHECK(activations(paci.memory[st]) == activations(flush.memory[st]));
    CHECK(activations(mem.memory[st]) < activations(paci.memory[st]));
  }
}

TEST_CASE("Zero-bubble memory: at most P (H1) and 2P-1 (H2) micro-batches of activations") {
  const int p = 4, m = 16;
  auto sc = test::equal_stage_scenario(PipelineSchedule::kZbH1, p, m, 2);
  const double per_mb = 2 * cost::activation_bytes_per_layer(strat::activation_shape(sc),
                                                              cost::Recompute::kNone).value;
  auto most_in_flight = [&](const test::Simulated& s) {
    double most = 0;
    for (std::size_t st = 0; st + 1 < static_cast<std::size_t>(p); ++st) {  // last: + logits
      for (const auto& [name, bytes] : s.report.memory[st].breakdown_bytes) {
        if (name == "activations") most = std::max(most, bytes / per_mb);
      }
    }
    return most;
  };
  CHECK(most_in_flight(test::simulate_with(sc)) == doctest::Approx(p).epsilon(1e-6).scale(0));
  sc.parallel.schedule = PipelineSchedule::kZbH2;
  CHECK(most_in_flight(test::simulate_with(sc)) ==
        doctest::Approx(2 * p - 1).epsilon(1e-6).scale(0));
}

TEST_CASE("Interleaved 1F1B stage-0 activations: L layers x (1 + (P-1)/(P v)) (Korthikanti et al.)") {
  // Korthikanti et al. 2022 (arXiv 2205.05198), sec. 4.2.3: the first stage of the interleaved
  // schedule holds (1 + (P-1)/(P v)) times the activations of 1F1B's first stage (L layers).
  for (int p : {2, 4}) {
    for (int v : {2, 4}) {
      CAPTURE(p);
      CAPTURE(v);
      const int m = 4 * p;
      auto sc = test::equal_stage_scenario(PipelineSchedule::kInterleaved, p, m, 1, v);
      const auto s = test::simulate_with(sc);
      const double per_layer =
          cost::activation_bytes_per_layer(strat::activation_shape(sc), cost::Recompute::kNone).value;
      const double layers = sc.model.layers;
      double stage0 = 0;
      for (const auto& [name, bytes] : s.report.memory[0].breakdown_bytes) {
        if (name == "activations") stage0 = bytes;
      }
      CHECK(
          stage0 ==
          doctest::Approx(layers * per_layer * (1.0 + (p - 1.0) / (p * v))).epsilon(1e-6).scale(0));
    }
  }
}
