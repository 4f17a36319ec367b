#pragma once
// Builds small Scenarios in code for the strategy tests, with the invariants of scenario.hpp.
#include "costmodel/cluster_presets.hpp"
#include "costmodel/cost_model.hpp"
#include "report/step_report.hpp"
#include "sim/engine.hpp"
#include "strategies/input/model_presets.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::test {

inline strat::Scenario small_scenario(int dp, int tp, int pp, int global_batch, int micro_batch,
                                      int gpus_per_node = 8) {
  strat::Scenario s;
  s.name = "test";
  s.model = strat::find_model_preset("llama2-7b")->spec;
  s.model.layers = 8;
  s.model.seq_len = 1024;
  s.cluster = cost::find_cluster_preset("dgx-h100")->spec;
  s.cluster.gpus_per_node = gpus_per_node;
  s.cluster.nodes = dp * tp * pp / gpus_per_node;
  if (s.cluster.nodes == 0) {
    s.cluster.nodes = 1;
    s.cluster.gpus_per_node = dp * tp * pp;
  }
  s.training.global_batch = global_batch;
  s.training.micro_batch = micro_batch;
  s.parallel.dp = dp;
  s.parallel.tp = tp;
  s.parallel.pp = pp;
  // No framework host work (the "ideal" preset) and its 25 MB buckets: these tests check GPU-side
  // mechanisms; the host model has its own tests (framework_host_test.cpp).
  s.training.framework = strat::find_framework_preset("ideal")->spec;
  s.parallel.dp_bucket = cost::Bytes{25e6};
  return s;
}

// Builds, simulates and reports a scenario with the analytical cost model.
// Llama 2 70B layers (h 8192, f 28672, 64 heads, 8 K/V heads), 2 of them, at tp `tp` with
// sequence parallelism and `overlap`, 4K tokens, FlashAttention: the TP overlap tests' shape.
inline strat::Scenario llama2_70b_sp(int tp, strat::TpCommOverlap overlap) {
  auto sc = small_scenario(1, tp, 1, 1, 1);
  sc.model = strat::find_model_preset("llama2-70b")->spec;
  sc.model.seq_len = 4096;
  sc.model.layers = 2;
  sc.parallel.sequence_parallel = true;
  sc.parallel.tp_comm_overlap = overlap;
  sc.training.attention = strat::AttentionKind::kFlash;
  return sc;
}

inline strat::StepReport simulate_report(const strat::Scenario& sc, bool full = false) {
  const cost::CostModel costs(sc.cluster);
  const auto built = strat::build_workload(sc, costs, {full});
  const auto result = sim::Engine(built.workload).run();
  return strat::make_step_report(sc, built, result);
}

}  // namespace parasim::test
