// Megatron's data-parallel overlaps (strategies/data_parallel/megatron_buckets.hpp):
// parallel.dp_bucket_layout "megatron" and overlap_param_gather. The bucket sizes are pinned to
// megatron-core 0.19.2's own layout functions run on parasim's tensor lists
// (param_and_grad_buffer.py _compute_default_per_buffer_param_layout and distrib_optimizer.py
// DistributedOptimizer._compute_per_buffer_param_layout, called from a Python interpreter with
// megatron-core 0.19.2 installed, with stand-in parameters of the same element counts: Llama 2
// 7B's h 4096, ffn 11008, vocab 32000, in registration order).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "parser_problems.hpp"
#include "scenario_builder.hpp"
#include "strategies/data_parallel/megatron_buckets.hpp"
#include "strategies/framework/framework_presets.hpp"
#include "strategies/input/workload_estimate.hpp"

using namespace parasim;
using strat::GradBucket;

namespace {

// small_scenario's Llama 2 7B cut to `layers` layers, Megatron's layout, --overlap-grad-reduce.
strat::Scenario megatron_scenario(int dp, int pp, int gpus_per_node = 8) {
  auto sc = test::small_scenario(dp, 1, pp, dp, 1, gpus_per_node);
  sc.training.framework = strat::find_framework_preset("megatron-lm")->spec;
  sc.training.framework.gradient_reduction = strat::GradientReduction::kOverlapped;
  sc.parallel.dp_bucket = cost::Bytes{0};  // Megatron's default bucket
  sc.parallel.dp_bucket_layout = strat::DpBucketLayout::kMegatron;
  return sc;
}

std::vector<double> padded(const std::vector<GradBucket>& buckets) {
  std::vector<double> out;
  for (const auto& b : buckets) out.push_back(b.padded);
  return out;
}

std::vector<double> unpadded(const std::vector<GradBucket>& buckets) {
  std::vector<double> out;
  for (const auto& b : buckets) out.push_back(b.elements);
  return out;
}

const strat::CollectiveSummary* dp_collective(const strat::StepReport& r, const std::string& op) {
  for (const auto& c : r.collectives) {
    if (c.kind == "dp" && c.op == op) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("Megatron's default bucket: max(40M, 1M x dp x cp) elements") {
  CHECK(strat::megatron_default_bucket_elements(8) == 40e6);
  CHECK(strat::megatron_default_bucket_elements(40) == 40e6);
  CHECK(strat::megatron_default_bucket_elements(64) == 64e6);
  // The scenario's group is dp x cp (resolve_ddp_bucket_size's dp_cp_group): dp 32, cp 2 -> 64M.
  auto sc = test::small_scenario(32, 1, 1, 32, 1);
  sc.parallel.cp = 2;
  sc.parallel.dp_bucket = cost::Bytes{0};  // Megatron's default size
  sc.training.framework.gradient_reduction = strat::GradientReduction::kOverlapped;
  CHECK(strat::megatron_bucket_elements(sc, 0) == 64e6);
  CHECK(strat::megatron_bucket_elements(sc, 1) == 0);  // later stages: one bucket
}

TEST_CASE("the layout rule on a hand-made list: close at the size, 64 and lcm(dp, 128) padding") {
  // No distributed optimizer: 30 + 20 >= 40 closes; 15 + 5 + 50 closes at the end.
  const std::vector<std::vector<strat::MegatronTensor>> chunks = {
      {{30e6}, {20e6}}, {{15e6}}, {{5e6}, {50e6}}};
  const auto ddp = strat::megatron_grad_buckets(chunks, 40e6, 0);
  REQUIRE(ddp.size() == 2);
  CHECK(ddp[0].elements == 50e6);
  CHECK(ddp[0].padded == 50e6);
  CHECK(ddp[0].chunk == 0);
  CHECK(ddp[1].elements == 70e6);
  CHECK(ddp[1].chunk == 2);
  // Distributed optimizer, dp 8: 100 ends at 100, the next starts at 128 (64-aligned) and ends at
  // 158 >= 120: unpadded 158, padded to 256 (lcm(8, 128) = 128); the last 10 alone, 128.
  const auto dist = strat::megatron_grad_buckets({{{100}, {30}}, {{10}}}, 120, 8);
  REQUIRE(dist.size() == 2);
  CHECK(dist[0].elements == 158);
  CHECK(dist[0].padded == 256);
  CHECK(dist[1].elements == 10);
  CHECK(dist[1].padded == 128);
  CHECK(dist[1].chunk == 1);
  // One bucket without a size; a shared embedding gets its own only with the distributed optimizer.
  CHECK(strat::megatron_grad_buckets({{{100}, {30, true}}}, 0, 0).size() == 1);
  CHECK(strat::megatron_grad_buckets({{{100}, {30, true}}}, 0, 8).size() == 2);
}

TEST_CASE("Llama 2 7B (8 layers) on dp 8: Megatron's own buckets") {
  auto sc = megatron_scenario(8, 1);
  sc.parallel.zero_stage = 1;
  // DistributedOptimizer._compute_per_buffer_param_layout(params, 40_000_000, 8): 26 buckets,
  // the output table, then fc2 | fc1 | proj + qkv + input norm + the next layer's post norm...
  const auto buckets = strat::megatron_stage_buckets(sc, 0);
  CHECK(padded(buckets) ==
        std::vector<double>{131072000, 45092864, 90177536, 67112960, 45092864, 90177536, 67112960,
                            45092864,  90177536, 67112960, 45092864, 90177536, 67112960, 45092864,
                            90177536,  67112960, 45092864, 90177536, 67112960, 45092864, 90177536,
                            67112960,  45092864, 90177536, 67112960, 131076096});
  CHECK(unpadded(buckets) == padded(buckets));  // every size a multiple of 128 here
  CHECK(buckets.front().chunk == 0);            // the head's table completes the first
  CHECK(buckets.back().chunk == 9);  // the embedding (head, 8 layers, embedding) the last
  // _compute_per_buffer_param_layout(params, 100_000_000, 8): 14 buckets.
  sc.parallel.dp_bucket = cost::Bytes{100e6 * sc.training.gradient_bytes()};
  CHECK(padded(strat::megatron_stage_buckets(sc, 0)) ==
        std::vector<double>{131072000, 135270400, 112205824, 106958848, 185602048, 112205824,
                            106958848, 185602048, 112205824, 106958848, 185602048, 112205824,
                            106958848, 181407744});
  // Without --overlap-grad-reduce: bucket_size None, one bucket of the whole stage.
  sc.training.framework.gradient_reduction = strat::GradientReduction::kAfterBackward;
  const auto one = strat::megatron_stage_buckets(sc, 0);
  REQUIRE(one.size() == 1);
  CHECK(one[0].elements ==
        2 * 131072000.0 + 4096 +
            8 * (2 * 4096 + 3 * 4096.0 * 4096 + 4096.0 * 4096 + 3 * 4096.0 * 11008));
}

TEST_CASE("tied embeddings with pp 2, dp 6: the shared table alone, padding to lcm(6, 128)") {
  auto sc = megatron_scenario(6, 2, 4);
  sc.parallel.zero_stage = 1;
  sc.model.tied_embeddings = true;
  // _compute_per_buffer_param_layout(first stage: table (shared_embedding) and 4 layers,
  // 40_000_000, 6).
  const auto first = strat::megatron_stage_buckets(sc, 0);
  CHECK(padded(first) == std::vector<double>{45088896, 90177792, 67113216, 45093120, 90177792,
                                             67113216, 45093120, 90177792, 67113216, 45093120,
                                             90177792, 67113216, 4224, 131072256});
  CHECK(unpadded(first) == std::vector<double>{45088768, 90177536, 67112960, 45092864, 90177536,
                                               67112960, 45092864, 90177536, 67112960, 45092864,
                                               90177536, 67112960, 4096, 131072000});
  // Every later stage: one bucket (distributed_data_parallel.py, pp_rank > 0), except the
  // shared table's own.
  const auto last = strat::megatron_stage_buckets(sc, 1);
  REQUIRE(last.size() == 2);
  CHECK(last[0].elements == 131072000);
  CHECK(last[0].chunk == 0);
  CHECK(last[1].chunk == 4);  // the head's chunk, then 4 layers
}

TEST_CASE("--overlap-grad-reduce and --overlap-param-gather shorten a step whose DP is exposed") {
  // One micro-batch per replica: without overlap the whole reduction and the gather follow the
  // backward.
  auto after = megatron_scenario(8, 1);
  after.parallel.zero_stage = 1;
  after.training.framework.gradient_reduction = strat::GradientReduction::kAfterBackward;
  auto grads = after;
  grads.training.framework.gradient_reduction = strat::GradientReduction::kOverlapped;
  auto params = grads;
  params.parallel.overlap_param_gather = true;
  const auto r_after = test::simulate_report(after);
  const auto r_grads = test::simulate_report(grads);
  const auto r_params = test::simulate_report(params);
  const double grad_bytes = after.training.gradient_bytes();
  const auto* rs_after = dp_collective(r_after, "reduce-scatter");
  const auto* rs_grads = dp_collective(r_grads, "reduce-scatter");
  const auto* ag_params = dp_collective(r_params, "all-gather");
  REQUIRE(rs_after);
  REQUIRE(rs_grads);
  REQUIRE(ag_params);
  CHECK(rs_after->count_per_gpu == 1);
  CHECK(rs_grads->count_per_gpu == 26);
  CHECK(ag_params->count_per_gpu == 26);
  // Mean bucket: the stage's padded elements / 26.
  double total = 0;
  for (const auto& b : strat::megatron_stage_buckets(grads, 0)) total += b.padded;
  CHECK(rs_grads->mean_message_bytes == doctest::Approx(total * grad_bytes / 26).epsilon(1e-9));
  CHECK(ag_params->mean_message_bytes ==
        doctest::Approx(total * cost::bytes_per_element(params.training.precision) / 26)
            .epsilon(1e-9));
  CHECK(r_grads.step_time_s < r_after.step_time_s * 0.99);
  CHECK(r_params.step_time_s < r_grads.step_time_s * 0.99);
  // The op estimate (workload_estimate.hpp) still bounds the op count from above, within 10 %.
  for (const auto* sc : {&after, &grads, &params}) {
    const cost::CostModel costs(sc->cluster);
    const auto ops =
        static_cast<double>(strat::build_workload(*sc, costs, {false, {}}).workload.op_count());
    const double estimate = strat::estimate_workload(*sc, false).ops;
    CHECK(estimate >= ops);
    CHECK(estimate <= 1.10 * ops);
  }
}

TEST_CASE(
    "the rules: overlap_param_gather needs the distributed optimizer and overlapped reduction") {
  const std::string base =
      R"({"model": "llama2-7b", "cluster": "dgx-h100",
          "training": {"global_batch": 8, "micro_batch": 1%s},
          "parallel": {"dp": 8, %s}})";
  auto scenario = [&](const std::string& training, const std::string& parallel) {
    std::string s = base;
    s.replace(s.find("%s"), 2, training);
    s.replace(s.find("%s"), 2, parallel);
    return s;
  };
  auto p = test::problems_of(scenario("", R"("zero_stage": 0, "overlap_param_gather": true)"));
  CHECK(test::has_problem(p, "/parallel/overlap_param_gather", "zero_stage 1"));
  CHECK(test::has_problem(p, "/parallel/overlap_param_gather", "--overlap-grad-reduce"));
  CHECK(test::has_problem(p, "/parallel/overlap_param_gather", "dp_bucket_layout"));
  p = test::problems_of(scenario("", R"("zero_stage": 2, "dp_bucket_layout": "megatron")"));
  CHECK(test::has_problem(p, "/parallel/dp_bucket_layout", "zero_stage 0"));
  p = test::problems_of(scenario("", R"("dp_bucket_layout": "per-parameter")"));
  CHECK(test::has_problem(p, "/parallel/dp_bucket_layout", "megatron"));
  // All three set: it parses.
  const auto ok = strat::parse_scenario(
      scenario(R"(, "framework": {"preset": "megatron-lm", "gradient_reduction": "overlapped"})",
               R"("zero_stage": 1, "dp_bucket_layout": "megatron", "overlap_param_gather": true)"),
      "ok.json");
  CHECK(ok.parallel.overlap_param_gather);
  CHECK(ok.parallel.dp_bucket_layout == strat::DpBucketLayout::kMegatron);
}
