#include "strategies/workload/workload_builder.hpp"

#include <doctest/doctest.h>

#include <cmath>

#include "costmodel/activation_memory.hpp"
#include "costmodel/cost_model.hpp"
#include "report/step_report.hpp"
#include "scenario_builder.hpp"
#include "sim/engine.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/layers/layer_program.hpp"

using namespace parasim;

namespace {

struct Run {
  strat::BuiltWorkload built;
  sim::SimResult result;
  strat::StepReport report;
};

Run simulate(const strat::Scenario& sc, bool full) {
  const cost::CostModel costs(sc.cluster);
  Run r;
  r.built = strat::build_workload(sc, costs, {full});
  r.result = sim::Engine(r.built.workload).run();
  r.report = strat::make_step_report(sc, r.built, r.result);
  return r;
}

double activations_at_peak(const Run& r, std::size_t device) {
  const auto& cats = r.built.workload.memory_categories();
  for (std::size_t c = 0; c < cats.size(); ++c) {
    if (cats[c] == "activations")
      return static_cast<double>(r.result.peak_breakdown_bytes[device][c]);
  }
  return -1;
}

}  // namespace

TEST_CASE("Symmetric and full simulation give the same step time on symmetric inputs") {
  struct Case {
    int dp, tp, pp, zero;
    bool sp;
    strat::PipelineSchedule schedule;
  };
  for (const Case c : {Case{2, 2, 2, 0, false, strat::PipelineSchedule::kOneFOneB},
                       Case{2, 4, 2, 1, true, strat::PipelineSchedule::kOneFOneB},
                       Case{4, 2, 2, 2, false, strat::PipelineSchedule::kGpipe},
                       Case{4, 1, 2, 3, false, strat::PipelineSchedule::kOneFOneB},
                       Case{16, 1, 1, 0, false, strat::PipelineSchedule::kOneFOneB}}) {
    CAPTURE(c.dp);
    CAPTURE(c.tp);
    CAPTURE(c.pp);
    CAPTURE(c.zero);
    auto sc = test::small_scenario(c.dp, c.tp, c.pp, 8 * c.dp, 1);
    sc.parallel.zero_stage = c.zero;
    sc.parallel.sequence_parallel = c.sp;
    sc.parallel.schedule = c.schedule;
    const auto sym = simulate(sc, false);
    const auto full = simulate(sc, true);
    CHECK(full.built.workload.device_count() == static_cast<std::size_t>(c.dp * c.tp * c.pp));
    CHECK(sym.built.workload.device_count() == static_cast<std::size_t>(c.pp));
    CHECK(sym.result.makespan == full.result.makespan);
    CHECK(sym.report.comm_bytes == full.report.comm_bytes);
    for (std::size_t d = 0; d < full.result.peak_memory_bytes.size(); ++d) {
      const int stage = full.built.devices[d].stage;
      CHECK(full.result.peak_memory_bytes[d] ==
            sym.result.peak_memory_bytes[static_cast<std::size_t>(stage)]);
    }
  }
}

TEST_CASE("Activation sets in flight: 1F1B holds min(P-s, m) on stage s, GPipe holds m") {
  // Stages other than the last (which also holds the logits) keep exactly n micro-batches of
  // layers_per_stage layers of Korthikanti activations at their peak, plus, with selective
  // recompute, the attention core of the one layer whose backward is running.
  for (auto schedule : {strat::PipelineSchedule::kOneFOneB, strat::PipelineSchedule::kGpipe}) {
    for (auto recompute : {cost::Recompute::kNone, cost::Recompute::kSelective}) {
      auto sc = test::small_scenario(1, 2, 4, 8, 1);
      sc.parallel.schedule = schedule;
      sc.training.recompute = recompute;
      const auto r = simulate(sc, false);
      const double per_layer =
          cost::activation_bytes_per_layer(strat::activation_shape(sc), recompute).value;
      const double per_mb = per_layer * sc.stage_layer_count(0);
      const double transient =
          cost::activation_bytes_per_layer(strat::activation_shape(sc), cost::Recompute::kNone)
              .value -
          per_layer;
      for (int s = 0; s + 1 < sc.parallel.pp; ++s) {
        const int in_flight = schedule == strat::PipelineSchedule::kGpipe
                                  ? sc.micro_batches()
                                  : std::min(sc.parallel.pp - s, sc.micro_batches());
        CAPTURE(s);
        // Whole bytes per op: allow one byte of rounding per allocation.
        CHECK(std::abs(activations_at_peak(r, static_cast<std::size_t>(s)) -
                       (in_flight * per_mb + transient)) <=
              in_flight * sc.stage_layer_count(0) + 2);
      }
    }
  }
}

TEST_CASE("Full recompute keeps only the layer inputs between passes") {
  auto sc = test::small_scenario(1, 1, 2, 8, 1, 2);
  sc.training.recompute = cost::Recompute::kFull;
  const auto r = simulate(sc, false);
  const double stored =
      cost::activation_bytes_per_layer(strat::activation_shape(sc), cost::Recompute::kFull).value;
  const double full =
      cost::activation_bytes_per_layer(strat::activation_shape(sc), cost::Recompute::kNone).value;
  // Stage 0 peaks inside a backward: P micro-batches' inputs for every layer, plus one layer
  // re-materialised in full.
  const double expected = 2 * sc.stage_layer_count(0) * stored + (full - stored);
  CHECK(std::abs(activations_at_peak(r, 0) - expected) <= 2 * sc.stage_layer_count(0) + 2);
}

TEST_CASE("Data-parallel all-reduce moves 2(n-1)/n of the gradient bytes per rank") {
  auto sc = test::small_scenario(8, 1, 1, 16, 1);
  sc.cluster.fabric.nvls = false;  // a ring (the NVLS volume is checked below)
  const auto r = simulate(sc, false);
  const double params = sc.model.layers * strat::layer_params_per_tp_rank(sc.model, 1) +
                        strat::embedding_params_per_tp_rank(sc.model, 1, 0, 0);
  const double grad_bytes = params * 2;  // bf16 gradients
  const double per_rank = 2.0 * 7 / 8 * grad_bytes;
  CHECK(r.report.comm_bytes[static_cast<std::size_t>(strat::CommKind::kDataParallel)] ==
        doctest::Approx(8 * per_rank).epsilon(1e-12).scale(0));
  // All inside one node: every byte goes over NVLink.
  CHECK(r.report.link_bytes_inter_node == 0);
  // With NVLink SHARP, NCCL's NVLS all-reduce sends each slice to the switch once and the reduced
  // 1/n slice back for the multicast: (n+1)/n of the bytes (nccl_model.hpp).
  auto nvls = sc;
  nvls.cluster.fabric.nvls = true;
  CHECK(simulate(nvls, false)
            .report.comm_bytes[static_cast<std::size_t>(strat::CommKind::kDataParallel)] ==
        doctest::Approx(8 * 9.0 / 8 * grad_bytes).epsilon(1e-12).scale(0));
  // fp32 gradients (Megatron's main_grad): twice the bytes reduced, 2 more bytes per parameter
  // of gradient memory.
  sc.training.fp32_gradients = true;
  const auto f = simulate(sc, false);
  CHECK(f.report.comm_bytes[static_cast<std::size_t>(strat::CommKind::kDataParallel)] ==
        doctest::Approx(2 * 8 * per_rank).epsilon(1e-12).scale(0));
  auto gradients = [](const strat::StepReport& rep) {
    for (const auto& [name, bytes] : rep.memory[0].breakdown_bytes) {
      if (name == "gradients") return bytes;
    }
    return -1.0;
  };
  CHECK(gradients(r.report) > 0);
  CHECK(gradients(f.report) == doctest::Approx(2 * gradients(r.report)).epsilon(1e-12).scale(0));
  // ZeRO-1: the gradient reduce-scatter doubles, the weights' all-gather stays in bf16: 1.5x.
  sc.parallel.zero_stage = 1;
  sc.training.fp32_gradients = false;
  const double bf16_zero1 =
      simulate(sc, false)
          .report.comm_bytes[static_cast<std::size_t>(strat::CommKind::kDataParallel)];
  sc.training.fp32_gradients = true;
  const double fp32_zero1 =
      simulate(sc, false)
          .report.comm_bytes[static_cast<std::size_t>(strat::CommKind::kDataParallel)];
  CHECK(fp32_zero1 == doctest::Approx(1.5 * bf16_zero1).epsilon(1e-12).scale(0));
}

TEST_CASE("Tensor parallel: two all-reduces forward and two backward per layer of b*s*h*2 bytes") {
  auto sc = test::small_scenario(1, 4, 1, 4, 1);
  sc.cluster.fabric.nvls = false;  // ring all-reduces: 2(n-1)/n of the bytes each
  const auto r = simulate(sc, false);
  const double bsh = 1.0 * sc.model.seq_len * sc.model.hidden * 2;
  const double per_rank_per_ar = 2.0 * 3 / 4 * bsh;
  // Per micro-batch: 4 per layer, plus the embedding's forward and the head's backward, and the
  // loss statistics (3 floats per token).
  const double per_mb = sc.model.layers * 4 * per_rank_per_ar + 2 * per_rank_per_ar +
                        2.0 * 3 / 4 * 12.0 * sc.model.seq_len;
  CHECK(r.report.comm_bytes[static_cast<std::size_t>(strat::CommKind::kTensorParallel)] ==
        doctest::Approx(4 * sc.micro_batches() * per_mb).epsilon(1e-12).scale(0));
}

TEST_CASE("Huge workloads are refused with the limit named") {
  auto sc = test::small_scenario(8, 8, 16, 8 * 64, 1, 8);
  sc.model.layers = 96;
  const cost::CostModel costs(sc.cluster);
  strat::BuildOptions options{true, {}};
  options.limits.max_ops = 1'000'000;
  CHECK_THROWS_WITH_AS(strat::build_workload(sc, costs, options),
                       doctest::Contains("over the limit of 1.0 million (--max-ops raises it)"),
                       cost::InputError);
}

TEST_CASE("Symmetric and full simulation agree for every pipeline schedule (tp 2 with SP)") {
  for (auto schedule : strat::kAllSchedules) {
    CAPTURE(strat::schedule_name(schedule));
    auto sc = test::small_scenario(1, 2, 4, 8, 1);
    sc.parallel.sequence_parallel = true;
    sc.parallel.schedule = schedule;
    if (schedule == strat::PipelineSchedule::kInterleaved ||
        schedule == strat::PipelineSchedule::kInterleavedZb ||
        strat::places_chunks_in_v(schedule)) {
      sc.parallel.chunks = 2;
    }
    const auto sym = simulate(sc, false);
    const auto full = simulate(sc, true);
    CHECK(sym.result.makespan == full.result.makespan);
    CHECK(sym.report.step_time_s == full.report.step_time_s);
    for (double b : full.report.bubble_fraction) {
      CHECK(b >= 0.0);
      CHECK(b <= 1.0);
    }
  }
}

TEST_CASE("Data-parallel groups spread unevenly over nodes are refused before simulating") {
  auto sc = test::small_scenario(3, 1, 2, 6, 1, 2);  // dp 3 on 2-GPU nodes: 2 + 1 members
  sc.cluster.gpus_per_node = 2;
  sc.cluster.nodes = 3;
  cost::Diagnostics d("t.json");
  strat::check_scenario(sc, d);
  CHECK_FALSE(d.ok());
  CHECK(d.to_string().find("/parallel/dp") != std::string::npos);
}

TEST_CASE("Rails-only fabric: pipeline hops between nodes must stay on a rail") {
  auto sc = test::small_scenario(1, 4, 4, 4, 1, 8);  // 16 GPUs on 2 nodes; hops of 4 GPUs
  sc.cluster.rails_only = true;
  cost::Diagnostics d("t.json");
  strat::check_scenario(sc, d);
  CHECK(d.to_string().find("/cluster/rails_only") != std::string::npos);
  auto aligned = test::small_scenario(1, 8, 2, 4, 1, 8);  // hops of 8 GPUs: same local index
  aligned.cluster.rails_only = true;
  cost::Diagnostics ok("t.json");
  strat::check_scenario(aligned, ok);
  CHECK(ok.ok());
}

TEST_CASE("Rails-only fabric: context-parallel and TSP rings between nodes must stay on a rail") {
  auto ring = [](int tp, int cp, strat::TpPlacement placement) {
    const int dp = 16 / (tp * cp);  // 16 GPUs on 2 nodes of 8
    auto sc = test::small_scenario(dp, tp, 1, dp, 1, 8);
    sc.parallel.cp = cp;
    sc.cluster.gpus_per_node = 8;
    sc.cluster.nodes = 2;
    sc.parallel.tp_placement = placement;
    sc.training.attention = strat::AttentionKind::kFlash;
    sc.model.seq_len = 4096;
    sc.cluster.rails_only = true;
    cost::Diagnostics d("t.json");
    strat::check_scenario(sc, d);
    return d.to_string();
  };
  using strat::TpPlacement;
  // tp 4 x cp 4: the hop from replica 1 (GPUs 4-7) to replica 2 (GPUs 8-11) changes the index.
  CHECK(ring(4, 4, TpPlacement::kMegatron).find("context-parallel ring must stay on a rail") !=
        std::string::npos);
  CHECK(ring(8, 2, TpPlacement::kMegatron).find("/cluster/rails_only") == std::string::npos);
  CHECK(ring(4, 2, TpPlacement::kMegatron).find("/cluster/rails_only") == std::string::npos);
  CHECK(ring(16, 1, TpPlacement::kTsp).find("TSP's weight ring cannot cross nodes") !=
        std::string::npos);
  CHECK(ring(8, 1, TpPlacement::kTsp).find("/cluster/rails_only") == std::string::npos);
  // Groups within a node but straddling one: tp 2 x cp 3 on 3 nodes of 8 (GPUs 6, 8, 10).
  auto sc = test::small_scenario(4, 2, 1, 4, 1, 8);
  sc.parallel.cp = 3;
  sc.cluster.nodes = 3;
  sc.training.attention = strat::AttentionKind::kFlash;
  sc.model.seq_len = 3072;
  sc.cluster.rails_only = true;
  cost::Diagnostics d("t.json");
  strat::check_scenario(sc, d);
  CHECK(d.to_string().find("context-parallel ring must stay on a rail") != std::string::npos);
}
