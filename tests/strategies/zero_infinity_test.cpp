// ZeRO-Infinity's parameter offload (parallel.offload "deepspeed" with offload_params and
// zero_stage 3; offload_cost.hpp, zero3_gather_units.hpp, docs/offload.md): the bytes each GPU
// moves over its host link per step against a hand count of stage3.py's and
// partition_parameters.py's copies, the HBM and host ledgers, and the rules.
#include <doctest/doctest.h>

#include <string>

#include "parser_problems.hpp"
#include "scenario_builder.hpp"
#include "simulated_run.hpp"
#include "strategies/input/scenario_parser.hpp"

using namespace parasim;

namespace {

// Llama 2 7B cut to 8 layers (scenario_builder.hpp), by hand: a layer 4 x 4096^2 + 3 x 4096 x
// 11008 + 2 x 4096; the embedding and the output 32000 x 4096 each, the final norm 4096.
constexpr double kLayer = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2 * 4096;
constexpr double kParams = 8 * kLayer + 2 * 32000.0 * 4096 + 4096;

strat::Scenario infinity(int m) {
  auto sc = test::small_scenario(8, 1, 1, 8 * m, 1);
  sc.parallel.zero_stage = 3;
  sc.parallel.offload.flavour = cost::OffloadFlavour::kDeepSpeed;
  sc.parallel.offload.params = true;
  return sc;
}

using Run = test::SimulatedRun;

Run simulate(const strat::Scenario& sc) { return test::simulate_run(sc); }
using test::at_peak;

std::string scenario_text(const std::string& parallel) {
  return R"({"model": "llama2-7b", "cluster": "dgx-a100-80gb", "training": {"global_batch": 16,
            "micro_batch": 1, "framework": "deepspeed"}, "parallel": )" +
         parallel + "}";
}

}  // namespace

TEST_CASE("ZeRO-Infinity: bytes over the host link per step, DeepSpeed's copies by hand") {
  for (int m : {1, 3}) {
    CAPTURE(m);
    const Run r = simulate(infinity(m));
    REQUIRE(r.report.host_offload.has_value());
    const double partition = kParams / 8;
    // Down: each micro-batch's 16-bit partition into the pinned buffer, then the fp32 copy.
    CHECK(r.report.host_offload->d2h_bytes_per_gpu ==
          doctest::Approx((2.0 * m + 4) * partition).epsilon(1e-9));
    // Up: the buffer back every micro-batch, and each layer's 16-bit partition (1/8 of it)
    // before each of its gathers: the forward's and the backward's, every micro-batch.
    const double gathers = 2.0 * m * 8 * kLayer / 8 * 2;
    CHECK(r.report.host_offload->h2d_bytes_per_gpu ==
          doctest::Approx(2.0 * m * partition + gathers).epsilon(1e-9));
  }
}

TEST_CASE("ZeRO-Infinity: parameters and optimizer state leave HBM for the host") {
  const auto sc = infinity(2);
  auto plain = sc;
  plain.parallel.offload = {};
  const Run gpu = simulate(plain);
  const Run r = simulate(sc);
  CHECK(at_peak(gpu, "weights") == doctest::Approx(2 * kParams / 8).epsilon(1e-6));
  CHECK(at_peak(r, "weights") == 0);
  CHECK(at_peak(r, "optimizer state") == 0);
  // Host: fp32 master, momentum, variance, gradients (16 B), the 16-bit gradient buffer and the
  // 16-bit parameters (2 B each).
  CHECK(r.report.host_offload->host_bytes_per_gpu ==
        doctest::Approx(20 * kParams / 8).epsilon(1e-9));
  // DeepSpeedCPUAdam's 34 B per parameter from DGX H100's 614.4 GB/s over its 8 ranks, after the
  // last micro-batch's 16-bit copy back up (2 B) and the fp32 copy down (4 B) over PCIe Gen5.
  const double cpu = kParams / 8 * 34 / (614.4e9 / 8);
  const double link = sc.cluster.host.link_bandwidth.bytes_per_s;
  CHECK(r.report.optimizer_s >= cpu + (4 + 2) * kParams / 8 / link);
  CHECK(r.report.step_time_s > gpu.report.step_time_s);
}

TEST_CASE("ZeRO-Infinity: parsed, and refused where it is not built") {
  const auto s = strat::parse_scenario(
      scenario_text(
          R"({"dp": 8, "zero_stage": 3, "offload": "deepspeed", "offload_params": true})"),
      "z.json");
  CHECK(s.parallel.offload.params);
  using test::has_problem;
  // ZeRO-3's optimizer offload alone (the 16-bit partition on the GPU) is not built.
  auto p = test::problems_of(scenario_text(R"({"dp": 8, "zero_stage": 3, "offload": "deepspeed"})"),
                             "z.json");
  CHECK(has_problem(p, "/parallel/offload_params", "set offload_params true"));
  // Parameter offload needs ZeRO-3, and pinned buffers.
  p = test::problems_of(scenario_text(R"({"dp": 8, "zero_stage": 2, "offload": "deepspeed",
                                          "offload_params": true, "offload_pin_memory": false})"),
                        "z.json");
  CHECK(has_problem(p, "/parallel/offload_params", "zero_stage 3"));
  CHECK(has_problem(p, "/parallel/offload_pin_memory", "pageable"));
}
