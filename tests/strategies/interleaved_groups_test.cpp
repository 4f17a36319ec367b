// Interleaved 1F1B in groups of N micro-batches per chunk (parallel.microbatch_group; Llama 3,
// arXiv 2407.21783 sec. 3.3.2; Megatron-core's get_schedule_table and get_pp_rank_microbatches):
// the order against Megatron-core's documented table, the default against Megatron-LM's original
// order, the rules, and the memory a larger group holds.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "scenario_builder.hpp"
#include "strategies/input/scenario_file.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"
#include "strategies/schedules/schedule_family.hpp"

using namespace parasim;
using strat::ItemKind;
using strat::PipelineSchedule;

namespace {

strat::ScheduleShape shape(int p, int v, int m, int group) {
  strat::ScheduleShape s;
  s.schedule = PipelineSchedule::kInterleaved;
  s.stages = p;
  s.chunks = v;
  s.micro_batches = m;
  s.microbatch_group = group;
  return s;
}

std::vector<strat::PipelineItem> of_kind(const strat::StagePlan& plan, ItemKind kind) {
  std::vector<strat::PipelineItem> out;
  for (const auto& it : plan.items) {
    if (it.kind == kind) out.push_back(it);
  }
  return out;
}

// Warm-up forwards: those before the first backward, less the steady phase's first forward
// (which comes just before it) when there is a steady phase.
int warmup(const strat::StagePlan& plan, int total) {
  int n = 0;
  for (const auto& it : plan.items) {
    if (it.kind == ItemKind::kBackward) break;
    ++n;
  }
  return n < total ? n - 1 : n;
}

}  // namespace

TEST_CASE("groups of N: the forward order is Megatron-core's table for PP 2, N 3, M 5, VP 2") {
  // schedules.py get_schedule_table's docstring: micro-batch 0 1 2 0 1 2 3 4 3 4, chunk
  // 0 0 0 1 1 1 0 0 1 1.
  const std::vector<int> mbs = {0, 1, 2, 0, 1, 2, 3, 4, 3, 4};
  const std::vector<int> chunks = {0, 0, 0, 1, 1, 1, 0, 0, 1, 1};
  for (int stage : {0, 1}) {
    const auto plan = strat::stage_plan(shape(2, 2, 5, 3), stage);
    const auto f = of_kind(plan, ItemKind::kForward);
    const auto b = of_kind(plan, ItemKind::kBackward);
    REQUIRE(f.size() == 10);
    REQUIRE(b.size() == 10);
    for (std::size_t k = 0; k < f.size(); ++k) {
      CAPTURE(k);
      CHECK(f[k].micro_batch == mbs[k]);
      CHECK(f[k].chunk == chunks[k]);
      CHECK(b[k].micro_batch == mbs[k]);
      CHECK(b[k].chunk == 1 - chunks[k]);  // the backward runs the chunks in reverse
    }
    // Warm-up: (P - s - 1) * 2 + (v - 1) * N.
    CHECK(warmup(plan, 10) == (2 - stage - 1) * 2 + 3);
  }
}

TEST_CASE("groups of pp are Megatron-LM's original interleaved order") {
  for (int p : {2, 4}) {
    for (int v : {2, 3}) {
      for (int m : {p, 2 * p, 4 * p}) {
        for (int s = 0; s < p; ++s) {
          CAPTURE(p);
          CAPTURE(v);
          CAPTURE(m);
          CAPTURE(s);
          const auto plan = strat::stage_plan(shape(p, v, m, 0), s);
          const auto explicit_group = strat::stage_plan(shape(p, v, m, p), s);
          REQUIRE(plan.items.size() == explicit_group.items.size());
          const auto f = of_kind(plan, ItemKind::kForward);
          for (std::size_t k = 0; k < f.size(); ++k) {
            const int kk = static_cast<int>(k);
            CHECK(f[k].micro_batch == (kk / (p * v)) * p + kk % p);
            CHECK(f[k].chunk == (kk / p) % v);
            CHECK(explicit_group.items[k].micro_batch == plan.items[k].micro_batch);
            CHECK(explicit_group.items[k].chunk == plan.items[k].chunk);
          }
          CHECK(warmup(plan, m * v) == std::min((p - s - 1) * 2 + (v - 1) * p, m * v));
        }
      }
    }
  }
}

TEST_CASE("the group must lie between pp and the micro-batches and leave no short last group") {
  CHECK_FALSE(strat::interleaved_group_problem(4, 8, 0));
  CHECK(strat::interleaved_group_problem(4, 6, 0));  // 6 not a multiple of 4
  CHECK_FALSE(strat::interleaved_group_problem(4, 6, 6));
  CHECK(strat::interleaved_group_problem(4, 8, 2));         // under pp
  CHECK(strat::interleaved_group_problem(4, 8, 9));         // over the micro-batches
  CHECK(strat::interleaved_group_problem(4, 10, 8));        // a last group of 2 < pp
  CHECK_FALSE(strat::interleaved_group_problem(4, 12, 8));  // a last group of 4
  // Through the parser, at the field's path.
  const std::string text = R"({"model": {"preset": "llama2-7b", "layers": 8},
      "cluster": {"preset": "dgx-h100", "nodes": 1},
      "training": {"global_batch": 10, "micro_batch": 1},
      "parallel": {"pp": 4, "tp": 2, "schedule": "interleaved-1f1b", "chunks": 2,
                   "microbatch_group": 8}})";
  try {
    strat::parse_scenario_file(text, "t.json");
    FAIL("accepted a last group shorter than pp");
  } catch (const cost::InputError& e) {
    REQUIRE_FALSE(e.diagnostics().problems().empty());
    CHECK(e.diagnostics().problems()[0].json_path == "/parallel/microbatch_group");
  }
  const std::string other = R"({"model": {"preset": "llama2-7b", "layers": 8},
      "cluster": {"preset": "dgx-h100", "nodes": 1},
      "training": {"global_batch": 8, "micro_batch": 1},
      "parallel": {"pp": 4, "tp": 2, "microbatch_group": 4}})";
  CHECK_THROWS_AS(strat::parse_scenario_file(other, "t.json"), cost::InputError);  // 1f1b
}

TEST_CASE("a larger group holds more forwards in flight: more activation memory on stage 0") {
  auto sc = test::small_scenario(1, 1, 4, 16, 1);
  sc.parallel.schedule = PipelineSchedule::kInterleaved;
  sc.parallel.chunks = 2;
  double previous = 0;
  for (int group : {4, 8, 16}) {
    CAPTURE(group);
    sc.parallel.microbatch_group = group;
    const auto r = test::simulate_report(sc);
    double activations = 0;
    for (const auto& [name, bytes] : r.memory[0].breakdown_bytes) {
      if (name == "activations") activations = bytes;
    }
    CHECK(activations > previous);
    previous = activations;
  }
}
