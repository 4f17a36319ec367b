#pragma once
// A test harness for closed-form pipeline figures: every transformer-layer GEMM costs 1 us, the
// output head's GEMMs (n, m or k = vocab) are free, and memory-bound kernels, launches and links
// cost nothing, so every stage does the same work and communication is free. With one layer per
// virtual stage: t_F = 6 us, t_B = 12 us (t_B = 8 us and t_W = 4 us when split).
#include <memory>

#include "costmodel/cost_model.hpp"
#include "report/step_report.hpp"
#include "scenario_builder.hpp"
#include "sim/engine.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::test {

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

// P stages, `layers_per_stage` layers each, m micro-batches per step.
inline strat::Scenario equal_stage_scenario(strat::PipelineSchedule schedule, int p, int m,
                                            int layers_per_stage = 1, int chunks = 1) {
  auto sc = small_scenario(1, 1, p, m, 1);
  sc.model.layers = p * layers_per_stage * chunks;
  sc.model.vocab = 32003;  // a size no layer GEMM dimension has
  sc.parallel.schedule = schedule;
  sc.parallel.chunks = chunks;
  sc.cluster.device.hbm_bandwidth = cost::Bandwidth{1e30};
  sc.cluster.device.kernel_launch_overhead = sim::Time::zero();
  sc.cluster.intra_node = {cost::Bandwidth{1e30}, sim::Time::zero()};
  sc.cluster.inter_node = {cost::Bandwidth{1e30}, sim::Time::zero()};
  return sc;
}

struct Simulated {
  strat::BuiltWorkload built;
  sim::SimResult result;
  strat::StepReport report;
};

inline Simulated simulate_with(const strat::Scenario& sc,
                               std::shared_ptr<const cost::GemmCostModel> gemm = nullptr) {
  if (!gemm) gemm = std::make_shared<LayerOnlyGemms>(sc.model.vocab);
  const cost::CostModel costs(sc.cluster, gemm, 1.0);
  Simulated s;
  s.built = strat::build_workload(sc, costs, {});
  s.result = sim::Engine(s.built.workload).run();
  s.report = strat::make_step_report(sc, s.built, s.result);
  return s;
}

}  // namespace parasim::test
