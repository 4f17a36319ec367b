// Simulating with a version 2 profile's measured tables: slower measured GEMMs, faster measured
// collectives and slower measured pipeline transfers move the step time the expected way, and
// the reports keep the true bytes; measured solver stacks replace the analytical inverse roots.
#include <doctest/doctest.h>

#include "costmodel/profile.hpp"
#include "scenario_builder.hpp"
#include "strategies/optimizers/optimizer_shampoo.hpp"

using namespace parasim;

namespace {

struct Outcome {
  strat::StepReport report;
  std::vector<std::string> warnings;
};

Outcome simulate(const strat::Scenario& sc, const cost::Profile* profile) {
  const cost::CostModel costs = cost::make_cost_model(sc.cluster, profile);
  const auto built = strat::build_workload(sc, costs, {false});
  const auto result = sim::Engine(built.workload).run();
  return {strat::make_step_report(sc, built, result), costs.warnings().list()};
}

// TP 8 inside a node, two pipeline stages on two nodes.
strat::Scenario scenario() {
  return test::small_scenario(1, 8, 2, 8, 1);
}

cost::MeasuredTime mt(double t) {
  return cost::MeasuredTime{t, t, t, 10};
}

// A series measured at `factor` x the analytical time of the scenario's cluster.
cost::CollectiveSeries scaled_series(const strat::Scenario& sc, cost::CollectiveKind kind,
                                     cost::GroupPlacement group, double factor) {
  cost::CollectiveSeries s;
  s.kind = kind;
  s.group = group;
  for (double b = 1024; b <= 8.0 * 1024 * 1024 * 1024; b *= 2) {
    const auto plan = cost::plan_collective(kind, cost::Bytes{b}, group, sc.cluster);
    s.points.push_back({cost::Bytes{b}, false,
                        mt(factor * cost::estimate_time(plan, sc.cluster).to_seconds()), true});
  }
  return s;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("Measured GEMMs twice the roofline make the step slower, but less than twice") {
  const auto sc = scenario();
  const auto base = simulate(sc, nullptr);
  cost::Profile p;
  const cost::RooflineGemmModel roofline(sc.cluster.device);
  for (std::int64_t m : {256, 1024, 4096, 16384}) {
    for (std::int64_t n : {256, 1024, 4096, 16384}) {
      for (std::int64_t k : {256, 1024, 4096, 16384}) {
        const cost::GemmShape s{m, n, k, 1, cost::Dtype::kBf16};
        p.measured.gemm.push_back({s, false, false, mt(2 * roofline.gemm_time(s).to_seconds())});
      }
    }
  }
  const auto measured = simulate(sc, &p);
  CHECK(measured.report.step_time_s > 1.2 * base.report.step_time_s);
  CHECK(measured.report.step_time_s < 2.0 * base.report.step_time_s);
  CHECK(measured.report.comm_bytes == base.report.comm_bytes);
}

TEST_CASE("Measured collectives faster than the analytical plans make the step faster") {
  const auto sc = scenario();
  const auto base = simulate(sc, nullptr);
  cost::Profile p;
  p.measured.collectives.push_back(
      scaled_series(sc, cost::CollectiveKind::kAllReduce, {8, 8, 1}, 0.5));
  const auto measured = simulate(sc, &p);
  CHECK(measured.report.step_time_s < base.report.step_time_s);
  // True bytes in the report, whatever the calibration.
  CHECK(measured.report.comm_bytes == base.report.comm_bytes);
  CHECK(!any_contains(measured.warnings, "no measured all-reduce"));
  // The pipeline transfers found no send/recv series: analytical, with a warning.
  CHECK(any_contains(measured.warnings, "no measured send-recv on 2 GPUs (1 per node x 2 nodes)"));
}

TEST_CASE("A slow measured send/recv slows the pipeline transfers") {
  const auto sc = scenario();
  const auto base = simulate(sc, nullptr);
  cost::Profile p;
  p.measured.collectives.push_back(
      scaled_series(sc, cost::CollectiveKind::kSendRecv, {2, 1, 2}, 20.0));
  const auto measured = simulate(sc, &p);
  CHECK(measured.report.step_time_s > base.report.step_time_s);
  CHECK(measured.report.comm_bytes == base.report.comm_bytes);
  CHECK(!any_contains(measured.warnings, "send-recv"));
}

TEST_CASE("Shampoo: a measured solver stack replaces the analytical inverse-root time") {
  auto sc = test::small_scenario(8, 1, 1, 8, 1);
  sc.model = strat::find_model_preset("llama-953m")->spec;
  sc.optimizer.kind = strat::OptimizerKind::kDash;
  sc.optimizer.stacking = strat::Stacking::kGpu;
  sc.optimizer.solver = strat::RootSolver::kNewtonDb;
  const cost::CostModel analytical(sc.cluster);
  const auto base = strat::shampoo_step_cost(sc, analytical, 0);

  cost::Profile other;  // points of another solver: nothing changes
  other.measured.solvers.push_back({"chebyshev", 1024, 32, 60, cost::Dtype::kFp32, true, mt(1.0)});
  const auto same = strat::shampoo_step_cost(sc, cost::make_cost_model(sc.cluster, &other), 0);
  CHECK(same.inverse_roots == base.inverse_roots);
  CHECK(same.host_ops == base.host_ops);

  cost::Profile slow;  // one second per stack of 32 blocks of 1024: far above the analytical
  slow.measured.solvers.push_back(
      {"newton-db", 1024, 32, sc.optimizer.iterations, cost::Dtype::kFp32, true, mt(1.0)});
  const auto measured = strat::shampoo_step_cost(sc, cost::make_cost_model(sc.cluster, &slow), 0);
  CHECK(measured.inverse_roots > base.inverse_roots);
  CHECK(measured.host_ops == base.host_ops);  // the solver's ops are still issued and counted
  CHECK(measured.factor_update == base.factor_update);
}

TEST_CASE("Distributed Shampoo with a measured solver keeps its per-factor checks and syncs") {
  auto sc = test::small_scenario(8, 1, 1, 8, 1);
  sc.model = strat::find_model_preset("llama-953m")->spec;
  sc.optimizer.kind = strat::OptimizerKind::kShampoo;
  sc.optimizer.solver = strat::RootSolver::kCoupledNewton;
  const cost::CostModel analytical(sc.cluster);
  const auto base = strat::shampoo_step_cost(sc, analytical, 0);
  cost::Profile slow;  // block by block: 10 s for 32 factors of 1024
  slow.measured.solvers.push_back(
      {"coupled-newton", 1024, 32, sc.optimizer.iterations, cost::Dtype::kFp32, false, mt(10.0)});
  const auto measured = strat::shampoo_step_cost(sc, cost::make_cost_model(sc.cluster, &slow), 0);
  CHECK(measured.inverse_roots > base.inverse_roots);
  CHECK(measured.host_ops == base.host_ops);
  CHECK(measured.host_syncs == base.host_syncs);
  CHECK(base.host_syncs == (10 + 2 + 2) * base.factors_on_rank);
}
