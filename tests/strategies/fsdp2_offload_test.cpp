// FSDP2's CPUOffloadPolicy (parallel.offload "fsdp2"; fsdp2_units.hpp, Fsdp2HostCopyBytes;
// docs/offload.md): the bytes each GPU moves over its host link per step against a hand count of
// torch's copies, the model state leaving HBM for the host, the CPU step's time, and the rules.
#include <doctest/doctest.h>

#include <string>

#include "parser_problems.hpp"
#include "scenario_builder.hpp"
#include "simulated_run.hpp"
#include "strategies/input/scenario_parser.hpp"

using namespace parasim;

namespace {

// Llama 2 7B cut to 8 layers (scenario_builder.hpp), by hand: a block 4 x 4096^2 (attention) +
// 3 x 4096 x 11008 (SwiGLU) + 2 x 4096 (norms); the embedding 32000 x 4096; the head unit the
// output 32000 x 4096 and the final norm 4096.
constexpr double kBlock = 4.0 * 4096 * 4096 + 3.0 * 4096 * 11008 + 2 * 4096;
constexpr double kEmbedding = 32000.0 * 4096;
constexpr double kHead = 32000.0 * 4096 + 4096;
constexpr double kParams = 8 * kBlock + kEmbedding + kHead;

strat::Scenario offloading(int dp, int pp, int global_batch) {
  auto sc = test::small_scenario(dp, 1, pp, global_batch, 1);
  sc.parallel.zero_stage = 3;
  sc.parallel.fsdp2.enabled = true;
  sc.training.attention = strat::AttentionKind::kFlash;
  sc.training.fp32_gradients = true;
  sc.parallel.offload.flavour = cost::OffloadFlavour::kFsdp2;
  return sc;
}

using Run = test::SimulatedRun;

Run simulate(const strat::Scenario& sc) { return test::simulate_run(sc); }
using test::at_peak;

std::string scenario_text(const std::string& parallel, int global_batch) {
  return R"({"model": "llama2-7b", "cluster": "dgx-h100", "training": {"global_batch": )" +
         std::to_string(global_batch) +
         R"(, "micro_batch": 1, "framework": "torchtitan"}, "parallel": )" + parallel + "}";
}

}  // namespace

TEST_CASE("FSDP2 CPU offload: bytes over the host link per step, torch's copies by hand") {
  // One micro-batch on 8 GPUs. Down: every unit's reduced fp32 shard (4 B / 8 of it). Up: every
  // unit's fp32 shard before its forward gather, and again before the backward's for the units
  // resharded after the forward (torchtitan's default: blocks and embedding, not the head).
  const Run r = simulate(offloading(8, 1, 8));
  REQUIRE(r.report.host_offload.has_value());
  const auto& h = *r.report.host_offload;
  CHECK(h.d2h_bytes_per_gpu == doctest::Approx(4 * kParams / 8).epsilon(1e-9));
  CHECK(h.h2d_bytes_per_gpu ==
        doctest::Approx(4 * (kParams + kEmbedding + 8 * kBlock) / 8).epsilon(1e-9));
  // Kept whole after the forward: no second copy. A 1/2 shard kept on the GPU: the backward
  // gathers from it, nothing crosses the host link for it.
  for (int keep : {1, 2}) {
    CAPTURE(keep);
    auto sc = offloading(8, 1, 8);
    sc.parallel.fsdp2.reshard_after_forward = keep;
    const Run k = simulate(sc);
    CHECK(k.report.host_offload->h2d_bytes_per_gpu ==
          doctest::Approx(4 * kParams / 8).epsilon(1e-9));
    CHECK(k.report.host_offload->d2h_bytes_per_gpu ==
          doctest::Approx(4 * kParams / 8).epsilon(1e-9));
  }
  // Pipelining (2 stages of 4 ranks, 8 micro-batches): stage 0 (embedding, 4 blocks) gathers
  // each unit once from its shard, keeps it whole to the end and reduces it once.
  const Run pp = simulate(offloading(4, 2, 32));
  const double stage0 = kEmbedding + 4 * kBlock;
  CHECK(pp.report.host_offload->h2d_bytes_per_gpu == doctest::Approx(4 * stage0 / 4).epsilon(1e-9));
  CHECK(pp.report.host_offload->d2h_bytes_per_gpu == doctest::Approx(4 * stage0 / 4).epsilon(1e-9));
}

TEST_CASE("FSDP2 CPU offload: the shards leave HBM for the host, the CPU steps them") {
  const auto sc = offloading(8, 1, 8);
  auto plain = sc;
  plain.parallel.offload = {};
  const Run gpu = simulate(plain);
  const Run r = simulate(sc);
  // On the GPU: fp32 shards, their gradients, two moments, 16 B / 8 per parameter.
  CHECK(at_peak(gpu, "weights") == doctest::Approx(4 * kParams / 8).epsilon(1e-9));
  CHECK(at_peak(gpu, "optimizer state") == doctest::Approx(8 * kParams / 8).epsilon(1e-9));
  for (const char* c : {"weights", "gradients", "optimizer state"}) {
    CAPTURE(c);
    CHECK(at_peak(r, c) == 0);
  }
  const auto& h = *r.report.host_offload;
  CHECK(h.host_bytes_per_gpu == doctest::Approx(16 * kParams / 8).epsilon(1e-9));
  CHECK(h.host_bytes_per_node == doctest::Approx(16 * kParams).epsilon(1e-9));
  // torchtitan's fused AdamW on the CPU, 28 B per parameter from the node's 614.4 GB/s
  // shared by its 8 ranks; the GPU steps nothing. The step is that, plus at most the wait for
  // the last gradient copy and the host's own optimizer work (none here, the "ideal" host).
  const double cpu = kParams / 8 * 28 / (614.4e9 / 8);
  CHECK(r.report.optimizer_s >= cpu);
  // The last gradient copied out is the embedding unit's fp32 shard, over PCIe Gen5's 57.2 GB/s.
  const double last_copy = 4 * kEmbedding / 8 / 57.2e9;
  CHECK(r.report.optimizer_s <= cpu + 1.05 * last_copy);
  CHECK(r.report.step_time_s > gpu.report.step_time_s);
}

TEST_CASE("FSDP2 CPU offload: parsed, and refused where it is not built") {
  const auto s = strat::parse_scenario(
      scenario_text(R"({"dp": 8, "sharding": "fsdp2", "offload": "fsdp2"})", 8), "o.json");
  CHECK(s.parallel.offload.flavour == cost::OffloadFlavour::kFsdp2);
  using test::has_problem;
  // Without FSDP2's sharding mode.
  auto p = test::problems_of(scenario_text(R"({"dp": 8, "zero_stage": 3, "offload": "fsdp2"})", 8),
                             "o.json");
  CHECK(has_problem(p, "/parallel/offload", "parallel.sharding \"fsdp2\""));
  // Gradient accumulation without pipelining (a blocking copy and a CPU add per reduction).
  p = test::problems_of(scenario_text(R"({"dp": 8, "sharding": "fsdp2", "offload": "fsdp2"})", 16),
                        "o.json");
  CHECK(has_problem(p, "/parallel/offload", "gradient accumulation (2 micro-batches"));
  // DeepSpeed's and Megatron's settings are not FSDP2's.
  p = test::problems_of(scenario_text(R"({"dp": 8, "sharding": "fsdp2", "offload": "fsdp2",
                                          "offload_params": true, "offload_fraction": 0.5})",
                                      8),
                        "o.json");
  CHECK(has_problem(p, "/parallel/offload_params", "deepspeed"));
  CHECK(has_problem(p, "/parallel/offload_fraction", "megatron"));
}
