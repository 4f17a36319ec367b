// Optimizer offload through the parser, the builder and the report (docs/offload.md): the host
// link's bytes and the HBM/host split against hand counts, bad input with its paths, and a step
// that offloads over a slow host link never beating the same step on the GPU.
#include <doctest/doctest.h>

#include <string>

#include "costmodel/offload_cost.hpp"
#include "parser_problems.hpp"
#include "scenario_builder.hpp"
#include "simulated_run.hpp"
#include "strategies/input/scenario_parser.hpp"

using namespace parasim;
using cost::OffloadFlavour;

namespace {

using Run = test::SimulatedRun;

Run simulate(const strat::Scenario& sc) { return test::simulate_run(sc); }
using test::at_peak;

// dp ranks of ZeRO-`zero` on one DGX H100 node, `m` micro-batches per replica.
strat::Scenario offloading(OffloadFlavour f, int dp, int zero, int m) {
  auto sc = test::small_scenario(dp, 1, 1, dp * m, 1);
  sc.parallel.zero_stage = zero;
  sc.parallel.offload.flavour = f;
  return sc;
}

std::string scenario_text(const std::string& cluster, const std::string& parallel,
                          const std::string& training = "") {
  return R"({"model": "llama2-7b", "cluster": )" + cluster +
         R"(, "training": {"global_batch": 32, "micro_batch": 1)" + training +
         R"(}, "parallel": )" + parallel + "}";
}

}  // namespace

TEST_CASE("ZeRO-Offload: bytes over the host link per step, exactly DeepSpeed's copies") {
  for (int m : {1, 4}) {
    CAPTURE(m);
    const auto sc = offloading(OffloadFlavour::kDeepSpeed, 8, 2, m);
    const Run gpu_only = simulate([&] {
      auto s = sc;
      s.parallel.offload = {};
      return s;
    }());
    const Run r = simulate(sc);
    REQUIRE(r.report.host_offload.has_value());
    // The rank's partition: the GPU-only run's 16-bit weights / 2 B over 8 ranks.
    const double shard = at_peak(gpu_only, "weights") / 2 / 8;
    // Hand count (stage_1_and_2.py): m = 1: fp32 gradients down (4 B), 16-bit weights up (2 B);
    // m = 4: 2 B down after each micro-batch, 2 B up before the 2nd..4th, 4 B down at the end.
    const double d2h = m == 1 ? 4 * shard : (4 * 2 + 4) * shard;
    const double h2d = m == 1 ? 2 * shard : (3 * 2 + 2) * shard;
    CHECK(r.report.host_offload->d2h_bytes_per_gpu == doctest::Approx(d2h).epsilon(1e-9));
    CHECK(r.report.host_offload->h2d_bytes_per_gpu == doctest::Approx(h2d).epsilon(1e-9));
  }
}

TEST_CASE("ZeRO-Offload: the optimizer state and gradients leave HBM for the host, weights stay") {
  const auto sc = offloading(OffloadFlavour::kDeepSpeed, 8, 2, 2);
  auto plain = sc;
  plain.parallel.offload = {};
  const Run gpu_only = simulate(plain);
  const Run r = simulate(sc);
  const double psi = at_peak(gpu_only, "weights") / 2;  // the stage's parameters
  CHECK(at_peak(r, "weights") == at_peak(gpu_only, "weights"));
  CHECK(at_peak(r, "gradients") == 0);
  CHECK(at_peak(r, "optimizer state") == 0);
  CHECK(at_peak(gpu_only, "optimizer state") == doctest::Approx(12 * psi / 8).epsilon(1e-9));
  // Host: 18 B per owned parameter; the node's 8 ranks against DGX H100's 2 TB.
  const auto& h = *r.report.host_offload;
  CHECK(h.host_bytes_per_gpu == doctest::Approx(18 * psi / 8).epsilon(1e-9));
  CHECK(h.host_bytes_per_node == doctest::Approx(18 * psi).epsilon(1e-9));
  CHECK(h.host_capacity_bytes == 2e12);
  CHECK(h.fits_in_host);
  CHECK_FALSE(gpu_only.report.host_offload.has_value());
}

TEST_CASE("Megatron's offload: a fraction's state on the host, its GPU step shrinks") {
  auto sc = offloading(OffloadFlavour::kMegatron, 8, 1, 2);
  sc.parallel.offload.fraction = 0.5;
  auto plain = sc;
  plain.parallel.offload = {};
  const Run gpu_only = simulate(plain);
  const Run r = simulate(sc);
  const double shard = at_peak(gpu_only, "weights") / 2 / 8;
  CHECK(at_peak(r, "optimizer state") ==
        doctest::Approx(at_peak(gpu_only, "optimizer state") - 8 * 0.5 * shard).epsilon(1e-9));
  CHECK(r.report.host_offload->host_bytes_per_gpu ==
        doctest::Approx(16 * 0.5 * shard).epsilon(1e-9));
  CHECK(r.report.host_offload->d2h_bytes_per_gpu == doctest::Approx(4 * 0.5 * shard).epsilon(1e-9));
  // Pipelined copies (--overlap-cpu-optimizer-d2h-h2d) never lose to the serial order.
  auto serial = sc;
  serial.parallel.offload.overlap = false;
  CHECK(r.report.step_time_s <= simulate(serial).report.step_time_s);
}

TEST_CASE("Offload over a slow host link is never faster than the GPU-only step") {
  // The copies alone then take longer than the GPU's whole AdamW step; a model that dropped a
  // copy, overlapped the step with itself or left the CPU step out would fail here.
  for (const auto f : {OffloadFlavour::kDeepSpeed, OffloadFlavour::kMegatron}) {
    for (int dp : {1, 8}) {
      for (int m : {1, 4}) {
        CAPTURE(static_cast<int>(f));
        CAPTURE(dp);
        CAPTURE(m);
        auto sc = offloading(f, dp, f == OffloadFlavour::kDeepSpeed ? 2 : 1, m);
        sc.cluster.host.link_bandwidth = cost::Bandwidth{1e9};
        auto plain = sc;
        plain.parallel.offload = {};
        const Run off = simulate(sc);
        const Run gpu = simulate(plain);
        CHECK(off.report.step_time_s > gpu.report.step_time_s);
        // At least the step's last fp32 gradient copy comes on top of the backward.
        const double shard = at_peak(gpu, "weights") / 2 / dp;
        CHECK(off.report.step_time_s >=
              gpu.report.step_time_s - gpu.report.optimizer_s + 4 * shard / 1e9);
      }
    }
  }
}

TEST_CASE("Offload keys parse, with the host's figures from the preset or the scenario") {
  const auto s =
      strat::parse_scenario(scenario_text(R"({"preset": "hgx-h200", "host_memory": "2 TB",
                        "host_memory_bandwidth": "600 GB/s", "host_link": "pcie-gen5-x16"})",
                                          R"({"dp": 8, "zero_stage": 1, "offload": "megatron",
                        "offload_fraction": 0.5, "offload_overlap": false})"),
                            "offload.json");
  CHECK(s.parallel.offload.flavour == OffloadFlavour::kMegatron);
  CHECK(s.parallel.offload.fraction == 0.5);
  CHECK_FALSE(s.parallel.offload.overlap);
  CHECK(s.cluster.host.memory.value == 2e12);
  CHECK(s.cluster.host.link == "pcie-gen5-x16");
  const auto c = strat::parse_scenario(
      scenario_text(R"({"preset": "dgx-a100-80gb", "host_link_bandwidth": "24 GB/s"})",
                    R"({"dp": 8, "zero_stage": 2, "offload": "deepspeed"})"),
      "offload.json");
  CHECK(c.cluster.host.link_bandwidth.bytes_per_s == 24e9);
  CHECK(c.cluster.host.memory.value == 2e12);  // the preset's
}

TEST_CASE("Offload's bad input: every problem at its path, at once") {
  using test::has_problem;
  // A host nobody published; DeepSpeed under ZeRO-1; a Megatron-only fraction.
  auto p = test::problems_of(scenario_text(R"({"preset": "hgx-h200"})",
                                           R"({"dp": 8, "zero_stage": 1, "offload": "deepspeed",
                        "offload_fraction": 0.5})"),
                             "offload.json");
  CHECK(has_problem(p, "/cluster/host_memory", "host memory"));
  CHECK(has_problem(p, "/cluster/host_memory_bandwidth", "DRAM bandwidth"));
  CHECK(has_problem(p, "/cluster/host_link", "host link"));
  CHECK(has_problem(p, "/parallel/zero_stage", "zero_stage 2"));
  CHECK(has_problem(p, "/parallel/offload_fraction", "megatron"));
  // Parameter offload outside ZeRO-3; fp32 training.
  p = test::problems_of(
      scenario_text(R"({"preset": "dgx-a100-80gb"})",
                    R"({"dp": 8, "zero_stage": 2, "offload": "deepspeed", "offload_params": true})",
                    R"(, "precision": "fp32")"),
      "offload.json");
  CHECK(has_problem(p, "/parallel/offload_params", "zero_stage 3"));
  CHECK(has_problem(p, "/training/precision", "mixed precision"));
  // An unknown link kind and a bandwidth that is no bandwidth (the parser's own checks).
  p = test::problems_of(scenario_text(R"({"preset": "dgx-a100-80gb", "host_link": "pcie-gen3",
                        "host_memory_bandwidth": "5 GB"})",
                                      R"({"dp": 8, "zero_stage": 2, "offload": "deepspeed"})"),
                        "offload.json");
  CHECK(has_problem(p, "/cluster/host_link", "pcie-gen4-x16"));
  CHECK(has_problem(p, "/cluster/host_memory_bandwidth", "bandwidth"));
  // Megatron outside its distributed optimizer; a fraction of 0; FSDP2 without its mode.
  p = test::problems_of(scenario_text(R"("dgx-h100")", R"({"dp": 8, "offload": "megatron",
                                                           "offload_fraction": 0})"),
                        "offload.json");
  CHECK(has_problem(p, "/parallel/zero_stage", "distributed optimizer"));
  CHECK(has_problem(p, "/parallel/offload_fraction", "(0, 1]"));
  p = test::problems_of(scenario_text(R"("dgx-h100")", R"({"dp": 8, "zero_stage": 3,
                                                           "offload": "fsdp2"})"),
                        "offload.json");
  CHECK(has_problem(p, "/parallel/offload", "needs parallel.sharding \"fsdp2\""));
  // DeepSpeed with fp32 gradient accumulation takes its compact GPU partition path.
  p = test::problems_of(scenario_text(R"("dgx-a100-80gb")",
                                      R"({"dp": 8, "zero_stage": 2, "offload": "deepspeed"})",
                                      R"(, "grad_precision": "fp32")"),
                        "offload.json");
  CHECK(has_problem(p, "/training/grad_precision", "compact fp32 gradient partition"));
  p = test::problems_of(scenario_text(R"("dgx-h100")", R"({"dp": 8, "offload": "zero-offload"})"),
                        "offload.json");
  CHECK(has_problem(p, "/parallel/offload", "deepspeed"));
}
