// Asynchronous schedules with data parallelism (PipeDream's hybrid, arXiv 1806.03377 sec. 3.1;
// PipeDream-2BW, arXiv 2006.09503 sec. 3.1; PACI's local accumulation before the reduction):
// each stage's gradients all-reduced (ZeRO-1: reduce-scattered, the weights all-gathered back)
// with the same stage of the other replicas before its stage-local step
// (strategies/data_parallel/async_reduction.cpp).
#include <doctest/doctest.h>

#include "equal_stages.hpp"
#include "strategies/input/scenario_parser.hpp"

using namespace parasim;
using strat::PipelineSchedule;

namespace {

// dp replicas of a p-stage pipeline, m micro-batches per replica and step; communication costs
// real time (so the reduction is visible), layers one per stage.
strat::Scenario replicated(PipelineSchedule schedule, int dp, int p, int m, int zero_stage) {
  auto sc = test::small_scenario(dp, 1, p, m * dp, 1);
  sc.model.layers = 2 * p;
  sc.parallel.schedule = schedule;
  sc.parallel.zero_stage = zero_stage;
  return sc;
}

double dp_bytes(const strat::StepReport& r) {
  return r.comm_bytes[static_cast<std::size_t>(strat::CommKind::kDataParallel)];
}

double activations(const strat::DeviceMemory& m) {
  for (const auto& [name, bytes] : m.breakdown_bytes) {
    if (name == "activations") return bytes;
  }
  return -1.0;
}

int ceil_div(int a, int b) {
  return (a + b - 1) / b;
}

cost::Diagnostics checked(const strat::Scenario& sc) {
  cost::Diagnostics d("test");
  strat::check_scenario(sc, d);
  return d;
}

}  // namespace

TEST_CASE("Asynchronous schedules accept dp > 1 with ZeRO 0 or 1, refuse ZeRO-2/3 and FSDP2") {
  for (PipelineSchedule s :
       {PipelineSchedule::kPipeDream, PipelineSchedule::kPipeDream2BW, PipelineSchedule::kPaci}) {
    CAPTURE(strat::schedule_name(s));
    for (int zero : {0, 1}) CHECK(checked(replicated(s, 2, 2, 4, zero)).ok());
    const auto d = checked(replicated(s, 2, 2, 4, 2));
    REQUIRE_FALSE(d.ok());
    CHECK(d.problems().front().json_path == "/parallel/zero_stage");
  }
}

TEST_CASE(
    "Asynchronous data parallelism: per step, the same gradient bytes as the flush schedule") {
  // PACI and 2BW step once per m micro-batches: one reduction of the stage's gradients per global
  // batch, as 1F1B's; PipeDream steps after every micro-batch: m of them.
  for (int zero : {0, 1}) {
    for (int dp : {2, 4}) {
      CAPTURE(zero);
      CAPTURE(dp);
      const int p = 2, m = 4;
      const auto flush =
          test::simulate_report(replicated(PipelineSchedule::kOneFOneB, dp, p, m, zero));
      REQUIRE(dp_bytes(flush) > 0);
      for (PipelineSchedule s : {PipelineSchedule::kPipeDream2BW, PipelineSchedule::kPaci}) {
        CAPTURE(strat::schedule_name(s));
        const auto async = test::simulate_report(replicated(s, dp, p, m, zero));
        CHECK(dp_bytes(async) == doctest::Approx(dp_bytes(flush)).epsilon(1e-9));
      }
      const auto pipedream =
          test::simulate_report(replicated(PipelineSchedule::kPipeDream, dp, p, m, zero));
      CHECK(dp_bytes(pipedream) == doctest::Approx(m * dp_bytes(flush)).epsilon(1e-9));
    }
  }
}

TEST_CASE("PACI with dp > 1 keeps its staleness bound and 1F1B's activation memory") {
  for (int zero : {0, 1}) {
    for (int a : {1, 2, 4, 8}) {
      CAPTURE(zero);
      CAPTURE(a);
      const int p = 4, dp = 2;
      const auto paci = test::simulate_report(replicated(PipelineSchedule::kPaci, dp, p, a, zero));
      const auto flush =
          test::simulate_report(replicated(PipelineSchedule::kOneFOneB, dp, p, a, zero));
      const auto single = test::simulate_report(replicated(PipelineSchedule::kPaci, 1, p, a, zero));
      REQUIRE(paci.staleness.size() == static_cast<std::size_t>(p));
      for (int st = 0; st < p; ++st) {
        CAPTURE(st);
        const auto k = static_cast<std::size_t>(st);
        CHECK(paci.staleness[k].max <= ceil_div(p - st - 1, a));
        CHECK(paci.weight_versions[k] == 1);
        // 1F1B holds min(m, P - s) micro-batches: the same when a >= P.
        if (a >= p) CHECK(activations(paci.memory[k]) == activations(flush.memory[k]));
        CHECK(activations(paci.memory[k]) == activations(single.memory[k]));
      }
      // The reduction costs time: the replicated pipeline is no faster per replica.
      CHECK(paci.step_time_s >= single.step_time_s);
    }
  }
}

TEST_CASE("ZeRO-1 under PACI: reduce-scatter, shard step, all-gather before the next passes") {
  const auto sc = replicated(PipelineSchedule::kPaci, 2, 2, 4, 1);
  const cost::CostModel costs(sc.cluster);
  const auto built = strat::build_workload(sc, costs, {});
  int scatters = 0, gathers = 0, all_reduces = 0, steps = 0;
  for (sim::OpId op = 0; op < built.workload.op_count(); ++op) {
    const std::string label(built.workload.text(built.workload.op(op).label));
    scatters += label == "grad reduce-scatter";
    gathers += label == "param all-gather";
    all_reduces += label == "grad all-reduce";
    steps += label == "optimizer step";
  }
  // Per simulated device and stage-local step: the gradients in buckets, one gather.
  CHECK(all_reduces == 0);
  CHECK(steps > 0);
  CHECK(scatters >= steps);
  CHECK(scatters % steps == 0);
  CHECK(gathers == steps);
  const auto result = sim::Engine(built.workload).run();
  CHECK(result.makespan > sim::Time::zero());
}

TEST_CASE("Experts under PACI with ZeRO-1: reduce-scattered and gathered over their own group") {
  // OLMoE on 8 GPUs: dp 4, pp 2, ep 2 (experts reduced over edp = 2, dense over dp 4).
  const std::string text = R"({"model": {"preset": "olmoe-1b-7b", "layers": 4},
      "cluster": {"preset": "dgx-h100", "nodes": 1},
      "training": {"global_batch": 16, "micro_batch": 1},
      "parallel": {"dp": 4, "tp": 1, "pp": 2, "ep": 2, "zero_stage": 1, "schedule": "SCHEDULE"}})";
  auto scenario = [&](const std::string& schedule) {
    std::string t = text;
    t.replace(t.find("SCHEDULE"), 8, schedule);
    return strat::parse_scenario(t, "moe.json");
  };
  const auto flush = test::simulate_report(scenario("1f1b"));
  const auto paci = test::simulate_report(scenario("paci"));
  REQUIRE(dp_bytes(flush) > 0);
  CHECK(dp_bytes(paci) == doctest::Approx(dp_bytes(flush)).epsilon(1e-9));
}

TEST_CASE("Asynchronous schedules refuse optimizer offload (the step runs on the GPU)") {
  auto sc = replicated(PipelineSchedule::kPaci, 2, 2, 4, 1);
  sc.parallel.offload.flavour = cost::OffloadFlavour::kMegatron;
  const auto d = checked(sc);
  REQUIRE_FALSE(d.ok());
  CHECK(d.to_string().find("/parallel/offload") != std::string::npos);
}
