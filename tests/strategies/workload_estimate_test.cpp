// The work estimate (strategies/input/workload_estimate.hpp): a close upper bound of the ops the
// builder emits for every shipped scenario, symmetric and --full; the shipped scenarios inside
// the default limits; the oversized cases refused from the estimate alone, before
// anything is built; Shampoo's block count in closed form equal to the blocks it costs.
#include <doctest/doctest.h>

#include <chrono>

#include "../support/test_support.hpp"
#include "costmodel/profile.hpp"
#include "scenario_builder.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/input/workload_estimate.hpp"
#include "strategies/optimizers/optimizer_shampoo.hpp"

using namespace parasim;

namespace {

const test::fs::path kScenarios = test::kSourceDir / "scenarios";

strat::Scenario shipped(const std::string& name) {
  return strat::load_scenario((kScenarios / name).string());
}

std::vector<cost::Problem> problems_of(const strat::Scenario& sc, bool full,
                                       const strat::WorkloadLimits& limits = {}) {
  cost::Diagnostics d("x.json");
  strat::check_workload_limits(sc, full, limits, d);
  return d.problems();
}

bool has(const std::vector<cost::Problem>& problems, const std::string& path,
         const std::string& text) {
  for (const auto& p : problems) {
    if (p.json_path == path && p.message.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("the op estimate bounds every shipped scenario's op count from above, within 10 %") {
  for (const auto& file : test::json_files_in(kScenarios)) {
    const strat::Scenario sc = strat::load_scenario(file.string());
    const cost::CostModel costs(sc.cluster);
    for (bool full : {false, true}) {
      CAPTURE(file.filename().string());
      CAPTURE(full);
      // --full of a 2,048-GPU scenario is over the default op limit (checked below for others).
      if (full && strat::estimate_workload(sc, true).ops > 1e7) continue;
      const double estimate = strat::estimate_workload(sc, full).ops;
      const auto built = strat::build_workload(sc, costs, {full, {}});
      const auto ops = static_cast<double>(built.workload.op_count());
      CHECK(estimate >= ops);
      CHECK(estimate <= 1.10 * ops);
      CHECK(strat::estimate_workload(sc, full).devices ==
            static_cast<double>(built.workload.device_count()));
      CHECK(problems_of(sc, full).empty());
    }
  }
}

TEST_CASE("Shampoo's block count in closed form is the count of the blocks it costs") {
  auto sc = test::small_scenario(2, 2, 2, 8, 1);
  sc.optimizer.kind = strat::OptimizerKind::kShampoo;
  for (int block : {256, 1000, 1024, 5000}) {
    CAPTURE(block);
    sc.optimizer.block_size = block;
    const cost::CostModel costs(sc.cluster);
    for (int stage = 0; stage < 2; ++stage) {
      CHECK(strat::shampoo_block_count(sc, stage) == strat::shampoo_step_cost(sc, costs, stage).blocks);
    }
  }
}

TEST_CASE("the issue's oversized cases are refused from the estimate, in well under a second") {
  const auto start = std::chrono::steady_clock::now();
  const strat::Scenario s = shipped("llama2-7b-dgx-h100.json");

  // Shampoo with 16 x 16 blocks on Llama 2 7B: 13 million blocks (71 s and 1.9 GB before).
  auto shampoo = s;
  shampoo.optimizer.kind = strat::OptimizerKind::kShampoo;
  shampoo.optimizer.block_size = 16;
  CHECK(has(problems_of(shampoo, false), "/optimizer/block_size",
            "block_size 16 cuts the weights into about 13.2 million Shampoo blocks (all stages), "
            "over the limit of 1.0 million (--max-shampoo-blocks raises it)"));
  // The same with hidden 65536 (out of memory at 6.3 GB before).
  auto wide = shampoo;
  wide.model.hidden = 65536;
  CHECK(has(problems_of(wide, false), "/optimizer/block_size", "over the limit of 1.0 million"));

  // 4096 layers x 512 micro-batches (26 s and 4.3 GB before).
  auto deep = s;
  deep.model.layers = 4096;
  deep.training.global_batch = 2048;
  CHECK(deep.micro_batches() == 512);
  CHECK(has(problems_of(deep, false), "",
            "the simulation would have about 18.9 million ops, over the limit of 10.0 million "
            "(--max-ops raises it)"));

  // A tiny model (1 layer, hidden 64) on 1,048,576 GPUs: fine symmetric, refused with --full.
  strat::Scenario tiny = s;
  tiny.model.layers = 1;
  tiny.model.hidden = 64;
  tiny.model.heads = tiny.model.kv_heads = 1;
  tiny.model.ffn_hidden = 256;
  tiny.model.vocab = 128;
  tiny.model.seq_len = 16;
  tiny.cluster.nodes = 131072;
  tiny.parallel = strat::ParallelSpec{};
  tiny.parallel.dp = 1 << 20;
  tiny.training.global_batch = 1 << 20;
  tiny.training.micro_batch = 1;
  CHECK(problems_of(tiny, false).empty());
  CHECK(has(problems_of(tiny, true), "",
            "of memory in --full mode (24.1 million ops on 1.0 million simulated GPUs), over the "
            "limit of 4.000 GiB (--max-memory raises it)"));

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_MESSAGE(seconds < 1.0, "estimating took " << seconds << " s");  // a loose bound, not a benchmark

  // An option raises each limit.
  strat::WorkloadLimits raised;
  raised.max_shampoo_blocks = 2e7;
  raised.max_ops = 3e7;  // the host ops (one per item and sync point) count too
  raised.max_memory_bytes = 16.0 * (1 << 30);
  CHECK(problems_of(shampoo, false, raised).empty());
  CHECK(problems_of(deep, false, raised).empty());
  CHECK(problems_of(tiny, true, raised).empty());
}

TEST_CASE("build_workload refuses past a limit before building, naming the scenario's file") {
  strat::Scenario sc = shipped("llama2-7b-dgx-h100.json");
  sc.optimizer.kind = strat::OptimizerKind::kShampoo;
  sc.optimizer.block_size = 16;
  try {
    strat::build_workload(sc, cost::CostModel(sc.cluster), {});
    FAIL("no error");
  } catch (const cost::InputError& e) {
    CHECK(e.diagnostics().file() == (kScenarios / "llama2-7b-dgx-h100.json").string());
    REQUIRE(e.diagnostics().problems().size() == 1);
    CHECK(e.diagnostics().problems()[0].json_path == "/optimizer/block_size");
  }
}
