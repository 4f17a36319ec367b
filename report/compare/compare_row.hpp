#pragma once
// parasim::cli compare row — one variant of `parasim compare` and, when it applies, its
// simulation and report (shared by the table, the pictures and the JSON).

#include "report/compare/compare_variant.hpp"
#include "report/step_report.hpp"
#include "sim/engine.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::cli {

struct CompareRow {
  CompareVariant variant;
  // Filled only when variant.applies():
  strat::BuiltWorkload built;
  sim::SimResult result;
  strat::StepReport report;
  bool ran() const { return variant.applies(); }
};

}  // namespace parasim::cli
