#pragma once
// One scenario built and simulated (symmetric), with its step report, and a memory category's
// bytes at the first device's peak: shared by the offload tests.
#include <cstddef>
#include <string>

#include "costmodel/cost_model.hpp"
#include "sim/engine.hpp"
#include "strategies/workload/workload_builder.hpp"
#include "report/step_report.hpp"

namespace parasim::test {

struct SimulatedRun {
  strat::BuiltWorkload built;
  sim::SimResult result;
  strat::StepReport report;
};

inline SimulatedRun simulate_run(const strat::Scenario& sc) {
  const cost::CostModel costs(sc.cluster);
  SimulatedRun r;
  r.built = strat::build_workload(sc, costs, {false});
  r.result = sim::Engine(r.built.workload).run();
  r.report = strat::make_step_report(sc, r.built, r.result);
  return r;
}

// Bytes of `category` at device 0's peak; -1 when the workload has no such category.
inline double at_peak(const SimulatedRun& r, const std::string& category) {
  const auto& cats = r.built.workload.memory_categories();
  for (std::size_t c = 0; c < cats.size(); ++c) {
    if (cats[c] == category) return static_cast<double>(r.result.peak_breakdown_bytes[0][c]);
  }
  return -1;
}

}  // namespace parasim::test
