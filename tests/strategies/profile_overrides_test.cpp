// Every field a version 1 profile can override (docs/profile.md) changes the simulated step the
// way it should, one check per field. A hardware figure given in a profile gives exactly (bit
// for bit) the step of the same figure written into the scenario's cluster: the workload builder
// takes links, latencies, peaks and the rest from the cost model's cluster, never from the
// scenario's (issue 13: a profile's link bandwidths were ignored). The measured tables of
// version 2 are covered by measured_profile_test.cpp.
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "costmodel/profile.hpp"
#include "scenario_builder.hpp"

using namespace parasim;

namespace {

struct Step {
  double time_s = 0;
  double mfu = 0;
};

Step simulate(const strat::Scenario& sc, const cost::Profile* profile) {
  const cost::CostModel costs = cost::make_cost_model(sc.cluster, profile);
  const auto built = strat::build_workload(sc, costs, {false});
  const auto result = sim::Engine(built.workload).run();
  const auto report = strat::make_step_report(sc, built, result);
  return {report.step_time_s, report.mfu};
}

Step with_profile(const strat::Scenario& sc, const std::string& fields) {
  const cost::Profile p = cost::parse_profile(R"({"parasim_profile": 1, )" + fields + "}", "p.json");
  return simulate(sc, &p);
}

// dp 2 x tp 4 on each of 2 nodes, one pipeline stage per node: tensor- and data-parallel
// collectives on NVLink, pipeline transfers on the NICs.
strat::Scenario base_scenario() {
  auto sc = test::small_scenario(2, 4, 2, 16, 1);
  sc.model.seq_len = 512;
  return sc;
}

// The profile `fields` against the same figure written into the scenario (`edit`): identical
// steps, and `slower` says which way it moves from the unchanged scenario.
void check_cluster_field(const strat::Scenario& sc, const std::string& fields,
                         const std::function<void(cost::ClusterSpec&)>& edit, bool slower) {
  CAPTURE(fields);
  const Step base = simulate(sc, nullptr);
  const Step profiled = with_profile(sc, fields);
  strat::Scenario edited = sc;
  edit(edited.cluster);
  const Step written = simulate(edited, nullptr);
  CHECK(profiled.time_s == written.time_s);
  CHECK(profiled.mfu == written.mfu);
  if (slower) {
    CHECK(profiled.time_s > base.time_s);
  } else {
    CHECK(profiled.time_s < base.time_s);
  }
}

// A model parameter (not a cluster figure) that should make the step slower.
void check_slower(const strat::Scenario& sc, const std::string& fields) {
  CAPTURE(fields);
  CHECK(with_profile(sc, fields).time_s > simulate(sc, nullptr).time_s);
}

}  // namespace

TEST_CASE("profile links: bandwidths and latencies of both link classes reach the simulation") {
  const auto sc = base_scenario();
  check_cluster_field(sc, R"("intra_node": {"bandwidth": "1 GB/s"})",
                      [](auto& c) { c.intra_node.bandwidth = cost::Bandwidth{1e9}; }, true);
  check_cluster_field(sc, R"("inter_node": {"bandwidth": "1 GB/s"})",
                      [](auto& c) { c.inter_node.bandwidth = cost::Bandwidth{1e9}; }, true);
  // A link's latency prices point-to-point hops (collectives take NCCL's own latencies,
  // costmodel/nccl_model.hpp): the intra-node one shows on a pipeline inside one node.
  const auto one_node = test::small_scenario(2, 2, 2, 16, 1);
  check_cluster_field(one_node, R"("intra_node": {"latency": "200 us"})",
                      [](auto& c) { c.intra_node.latency = sim::Time::us(200); }, true);
  check_cluster_field(sc, R"("inter_node": {"latency": "200 us"})",
                      [](auto& c) { c.inter_node.latency = sim::Time::us(200); }, true);
}

TEST_CASE("profile device: peaks per precision, HBM bandwidth, launch overhead") {
  const auto sc = base_scenario();
  // bf16 training: a higher peak is a shorter step; MFU is against the profile's peak.
  check_cluster_field(sc, R"("device": {"peak": {"bf16": "2000 TFLOP/s"}})",
                      [](auto& c) { c.device.peak_bf16 = cost::FlopRate{2000e12}; }, false);
  auto fp16 = sc;
  fp16.training.precision = cost::Dtype::kFp16;
  check_cluster_field(fp16, R"("device": {"peak": {"fp16": "2000 TFLOP/s"}})",
                      [](auto& c) { c.device.peak_fp16 = cost::FlopRate{2000e12}; }, false);
  auto fp32 = sc;
  fp32.training.precision = cost::Dtype::kFp32;
  check_cluster_field(fp32, R"("device": {"peak": {"fp32": "200 TFLOP/s"}})",
                      [](auto& c) { c.device.peak_fp32 = cost::FlopRate{200e12}; }, false);
  // TF32: Shampoo's fp32 factor GEMMs with allow_tf32.
  auto tf32 = sc;
  tf32.optimizer.kind = strat::OptimizerKind::kShampoo;
  tf32.optimizer.allow_tf32 = true;
  check_cluster_field(tf32, R"("device": {"peak": {"tf32": "1500 TFLOP/s"}})",
                      [](auto& c) { c.device.peak_tf32 = cost::FlopRate{1500e12}; }, false);
  // FP8: no training precision or optimizer of parasim computes in fp8, so nothing moves.
  CHECK(with_profile(sc, R"("device": {"peak": {"fp8": "100 TFLOP/s"}})").time_s ==
        simulate(sc, nullptr).time_s);
  check_cluster_field(sc, R"("device": {"hbm_bandwidth": "1 TB/s"})",
                      [](auto& c) { c.device.hbm_bandwidth = cost::Bandwidth{1e12}; }, true);
  check_cluster_field(sc, R"("device": {"kernel_launch_overhead": "50 us"})",
                      [](auto& c) { c.device.kernel_launch_overhead = sim::Time::us(50); }, true);
}

TEST_CASE("profile gemm parameters and memory efficiency: each one less favourable, slower step") {
  const auto sc = base_scenario();
  check_slower(sc, R"("gemm": {"ceiling": 0.4})");
  check_slower(sc, R"("gemm": {"tile_m": 4096})");
  check_slower(sc, R"("gemm": {"tile_n": 4096})");
  check_slower(sc, R"("gemm": {"ctas_per_sm": 64})");  // waves of 132 x 64 tiles, mostly empty
  check_slower(sc, R"("gemm": {"k_half": 4096})");
  check_slower(sc, R"("gemm": {"k_ref": 1000000})");
  check_slower(sc, R"("gemm": {"memory_efficiency": 0.01})");
  check_slower(sc, R"("memory_efficiency": 0.1)");
}

TEST_CASE("a cost model of another cluster shape is refused by the workload builder") {
  const auto sc = base_scenario();
  auto other = sc.cluster;
  other.nodes = 4;
  CHECK_THROWS_AS(strat::build_workload(sc, cost::CostModel(other), {false}), std::invalid_argument);
}
