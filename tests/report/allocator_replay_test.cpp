// The ledger replayed through the caching allocator (report/memory/allocator_replay.hpp): on
// every shipped scenario the replay's requested peak is the ledger's, every free meets a live
// allocation, and requested <= allocated <= reserved; the report reads reserved for `fits`.
#include "report/memory/allocator_replay.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "../support/test_support.hpp"
#include "costmodel/cost_model.hpp"
#include "report/step_report.hpp"
#include "sim/engine.hpp"
#include "strategies/input/scenario_file.hpp"
#include "strategies/input/stage_split.hpp"
#include "strategies/registry/registry.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace {

namespace fs = std::filesystem;
using namespace parasim;

struct Run {
  strat::Scenario scenario;
  strat::BuiltWorkload built;
  sim::SimResult result;
};

Run simulate(const strat::Scenario& sc) {
  const cost::CostModel costs(sc.cluster);
  Run r;
  r.scenario = sc;
  r.built = strat::build_workload(sc, costs, {false});
  r.result = sim::Engine(r.built.workload).run();
  return r;
}

}  // namespace

void check_consistent(const strat::Scenario& scenario) {
  const Run r = simulate(scenario);
  const strat::StepReport report = strat::make_step_report(r.scenario, r.built, r.result);
  strat::AllocatorReplayOptions options;
  options.expandable_segments =
      r.scenario.training.allocator_kind() == strat::AllocatorKind::kExpandableSegments;
  for (const auto& m : report.memory) {
    options.extra_base_bytes.push_back(0);
    for (const auto& [category, bytes] : m.breakdown_bytes) {
      if (category == "stashed weights")
        options.extra_base_bytes.back() = static_cast<std::int64_t>(bytes);
    }
  }
  const auto replay = strat::replay_allocator(r.built.workload, r.result, options);
  REQUIRE(replay.size() == report.memory.size());
  for (std::size_t d = 0; d < replay.size(); ++d) {
    CAPTURE(d);
    const auto& m = report.memory[d];
    CHECK(replay[d].unmatched_free_bytes == 0);
    // Every free is one the builder allocated, except DeepSpeed's per-module ZeRO-3 gathering:
    // its ledger holds what the coordinator keeps resident as net changes per layer pass
    // (zero3_hold), not per module.
    if (r.scenario.parallel.zero_stage != 3 ||
        r.scenario.training.framework.zero3.unit != strat::Zero3Gather::kPerModule) {
      CHECK(replay[d].inexact_frees == 0);
    }
    // The replay's requested bytes follow the ledger delta by delta: the same peak.
    CHECK(replay[d].requested_peak_bytes == doctest::Approx(m.peak_bytes).epsilon(1e-12));
    CHECK(replay[d].allocated_peak_bytes >= replay[d].requested_peak_bytes);
    CHECK(replay[d].reserved_peak_bytes >= replay[d].allocated_peak_bytes);
    // Without a capacity the replay is the report's unless the report's ran out of room.
    if (m.allocator_out_of_memory == 0) {
      CHECK(m.reserved_bytes == replay[d].reserved_peak_bytes);
      CHECK(m.allocated_bytes == replay[d].allocated_peak_bytes);
    }
    CHECK(m.device_bytes ==
          doctest::Approx(m.allocated_bytes + m.cuda_context_bytes + m.nccl_buffer_bytes +
                          m.dispatch_buffer_bytes + m.userbuffer_bytes));
  }
}

TEST_CASE("every shipped scenario's ledger replays through the allocator consistently") {
  int scenarios = 0;
  for (const auto& entry : fs::directory_iterator(test::kSourceDir / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    check_consistent(strat::load_scenario_file(entry.path().string()).scenario);
    ++scenarios;
  }
  CHECK(scenarios >= 25);
}

TEST_CASE("every schedule's ledger frees exactly what it allocated") {
  const strat::Scenario base =
      strat::load_scenario_file((test::kSourceDir / "scenarios" / "paci-gpt2-medium.json").string())
          .scenario;
  for (const strat::Entry* e : strat::entries_of(strat::EntryKind::kSchedule)) {
    CAPTURE(e->name);
    strat::Scenario sc = base;
    sc.parallel.schedule = std::get<strat::ScheduleTraits>(e->traits).id;
    if (e->name == "interleaved-1f1b" || e->name == "interleaved-zb") sc.parallel.chunks = 3;
    if (strat::places_chunks_in_v(sc.parallel.schedule)) {  // 24 layers over 8 x 2: 2 + 1
      sc.parallel.chunks = strat::kVShapeChunks;
      sc.parallel.stage_layers = strat::balanced_chunk_split(
          sc.model.layers, sc.parallel.pp, sc.parallel.chunks,
          [&](int stage, int chunk) { return sc.virtual_stage(stage, chunk); });
    }
    if (e->name == "dualpipev") sc.training.global_batch *= 2;  // 2P = 16 micro-batches
    cost::Diagnostics d("test");
    strat::check_scenario(sc, d);
    REQUIRE_MESSAGE(d.ok(), d.to_string());
    check_consistent(sc);
  }
}

TEST_CASE("torchtitan runs with expandable segments unless the scenario says otherwise") {
  const std::string base = R"({"model": "llama3-8b", "cluster": "dgx-h100",
      "training": {"global_batch": 8, "micro_batch": 1, "framework": "torchtitan")";
  const auto titan = strat::parse_scenario_file(base +
                                                    "}, \"parallel\": {\"dp\": 8, "
                                                    "\"sharding\": \"fsdp2\"}}",
                                                "t.json");
  CHECK(titan.scenario.training.allocator_kind() == strat::AllocatorKind::kExpandableSegments);
  const auto cached = strat::parse_scenario_file(
      base + ", \"allocator\": \"caching\"}, \"parallel\": {\"dp\": 8, \"sharding\": \"fsdp2\"}}",
      "t.json");
  CHECK(cached.scenario.training.allocator_kind() == strat::AllocatorKind::kCaching);
  const auto megatron = strat::parse_scenario_file(
      R"({"model": "llama3-8b", "cluster": "dgx-h100", "training": {"global_batch": 8},
          "parallel": {"dp": 8}})",
      "t.json");
  CHECK(megatron.scenario.training.allocator_kind() == strat::AllocatorKind::kCaching);
  bool refused = false;
  try {
    strat::parse_scenario_file(base + ", \"allocator\": \"buddy\"}, \"parallel\": {\"dp\": 8}}",
                               "t.json");
  } catch (const cost::InputError& e) {
    refused = true;
    REQUIRE_FALSE(e.diagnostics().problems().empty());
    CHECK(e.diagnostics().problems()[0].json_path == "/training/allocator");
  }
  CHECK(refused);
}

TEST_CASE("a step whose memory does not fit is reported, with the request the segments miss") {
  // The same run on a device with too little memory: allocated memory is over the capacity, and
  // the replay meets its capacity, frees the cache, and names the request that found no room.
  strat::Scenario sc = strat::load_scenario_file(
                           (test::kSourceDir / "scenarios" / "llama2-7b-dgx-h100.json").string())
                           .scenario;
  const Run fits = simulate(sc);
  const auto full = strat::make_step_report(sc, fits.built, fits.result);
  REQUIRE(full.fits_in_hbm);
  const double needed = full.memory[0].device_bytes;
  sc.cluster.device.hbm_capacity = cost::Bytes{needed * 0.9};
  const Run tight = simulate(sc);
  const auto report = strat::make_step_report(sc, tight.built, tight.result);
  CHECK_FALSE(report.fits_in_hbm);
  CHECK(report.memory[0].allocator_out_of_memory == 1);
  CHECK(report.memory[0].allocator_out_of_memory_bytes > 0);
}
