#include "strategies/registry/registry.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "costmodel/activation_memory.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/input/scenario_parser.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

using namespace parasim;
using strat::EntryKind;

namespace {

bool listed(EntryKind kind, const std::string& name) {
  return strat::find_entry(kind, name) != nullptr;
}

// Which EntryTraits alternative each kind holds.
std::size_t traits_index(EntryKind kind) {
  switch (kind) {
    case EntryKind::kSchedule:
      return 0;
    case EntryKind::kTpPlacement:
      return 1;
    case EntryKind::kContextParallel:
      return 2;
    case EntryKind::kSharding:
      return 3;
    case EntryKind::kOptimizer:
      return 4;
    case EntryKind::kAttention:
      return 5;
    case EntryKind::kRecompute:
      return 6;
    case EntryKind::kFramework:
      return 7;
    case EntryKind::kDispatcher:
      return 8;
    case EntryKind::kPrecision:
      return 9;
    case EntryKind::kOffload:
      return 10;
    case EntryKind::kTpCommOverlap:
      return 11;
    case EntryKind::kAllocator:
      return 12;
  }
  return 99;
}

// The problems of `text` as "path: message" lines (empty when it parses).
std::vector<std::string> problems(const std::string& parallel, const std::string& extra = "") {
  const std::string text = R"({"model": "llama2-7b", "cluster": "dgx-h100",
      "training": {"global_batch": 64}, "parallel": )" +
                           parallel + extra + "}";
  try {
    strat::parse_scenario(text, "t.json");
  } catch (const cost::InputError& e) {
    std::vector<std::string> out;
    for (const auto& p : e.diagnostics().problems()) out.push_back(p.json_path + ": " + p.message);
    return out;
  }
  return {};
}

}  // namespace

TEST_CASE("every schedule, placement, sharding mode, optimizer and layer choice has its entry") {
  CHECK(strat::entries_of(EntryKind::kSchedule).size() == std::size(strat::kAllSchedules));
  for (auto s : strat::kAllSchedules) {
    const std::string name = strat::schedule_name(s);
    CAPTURE(name);
    CHECK(listed(EntryKind::kSchedule, name));
    CHECK(std::get<strat::ScheduleTraits>(strat::schedule_entry(s).traits).id == s);
    CHECK(static_cast<bool>(strat::schedule_traits(s).order));
    CHECK(static_cast<bool>(strat::schedule_traits(s).pipeline_time));
    strat::PipelineSchedule back{};
    CHECK(strat::schedule_from_name(name, &back));
    CHECK(back == s);
  }
  for (auto p : {strat::TpPlacement::kMegatron, strat::TpPlacement::kVanilla,
                 strat::TpPlacement::kBtp, strat::TpPlacement::kTsp}) {
    const std::string name = strat::tp_placement_name(p);
    CAPTURE(name);
    REQUIRE(listed(EntryKind::kTpPlacement, name));
    CHECK(strat::placement_traits(p).id == p);
  }
  for (auto r : {cost::Recompute::kNone, cost::Recompute::kSelective, cost::Recompute::kFull}) {
    CHECK(listed(EntryKind::kRecompute, cost::recompute_name(r)));
  }
  for (const char* name : {"unfused", "flash"}) CHECK(listed(EntryKind::kAttention, name));
  for (const char* name : {"ring", "allgather", "a2a", "a2a+p2p"}) {
    CHECK(listed(EntryKind::kContextParallel, name));
  }
  for (const char* name : {"zero-0", "zero-1", "zero-2", "zero-3"}) {
    CHECK(listed(EntryKind::kSharding, name));
  }
  for (const char* name : {"adamw", "shampoo", "dash-layer", "dash-gpu"}) {
    CHECK(listed(EntryKind::kOptimizer, name));
  }
  CHECK(strat::entries_of(EntryKind::kFramework).size() == strat::framework_presets().size());
}

TEST_CASE(
    "registry entries describe themselves: unique names, a paper, legal values per parameter") {
  for (EntryKind kind : strat::kAllEntryKinds) {
    const auto& info = strat::kind_info(kind);
    CHECK(info.kind == kind);
    CHECK_FALSE(info.title.empty());
    CHECK(info.scenario_key.rfind('/', 0) == 0);
    std::set<std::string> names;
    for (const strat::Entry* e : strat::entries_of(kind)) {
      CAPTURE(e->name);
      CHECK(names.insert(e->name).second);
      CHECK_FALSE(e->value.empty());
      CHECK_FALSE(e->description.empty());
      CHECK_FALSE(e->builder.empty());
      CHECK(e->traits.index() == traits_index(kind));
      if (kind != EntryKind::kFramework) {
        CHECK(e->paper.find("20") != std::string::npos);  // a citation with its year
      } else {
        CHECK_FALSE(e->paper.empty());  // the preset's sources
      }
      for (const auto& p : e->parameters) {
        CAPTURE(p.path);
        CHECK(p.path.rfind('/', 0) == 0);
        CHECK_FALSE(p.legal_values().empty());
        CHECK_FALSE(p.default_value.empty());
        CHECK_FALSE(p.meaning.empty());
        // The very parameter the parser reads at that path has the same legal values.
        CHECK(strat::registered_parameter(p.path).legal_values() == p.legal_values());
      }
    }
  }
}

TEST_CASE("schedule traits are the schedules' behaviour") {
  using S = strat::PipelineSchedule;
  for (auto s : strat::kAllSchedules) {
    CAPTURE(strat::schedule_name(s));
    const bool async = s == S::kPipeDream || s == S::kPipeDream2BW || s == S::kPaci;
    const bool searched = s == S::kZb1p || s == S::kZb2p;
    CHECK(strat::is_asynchronous(s) == async);
    CHECK(strat::is_searched(s) == searched);
    CHECK(strat::splits_weight_gradient(s) ==
          (searched || s == S::kZbH1 || s == S::kZbH2 || s == S::kInterleavedZb || s == S::kZbV ||
           s == S::kDualPipeV));
    CHECK(strat::stashes_weights(s) == (s == S::kPipeDream || s == S::kPipeDream2BW));
    CHECK(strat::searched_memory_multiple(s) == (s == S::kZb1p ? 1 : s == S::kZb2p ? 2 : 0));
  }
}

TEST_CASE("an entry's rules run when it is chosen; a parameter's when another entry is") {
  // paci_mode is PACI's parameter: reported with 1f1b, not with paci (whose own rules then run).
  CHECK(problems(R"({"pp": 8, "schedule": "1f1b", "paci_mode": "mem"})") ==
        std::vector<std::string>{
            "/parallel/paci_mode: paci_mode applies to \"schedule\": \"paci\" only"});
  CHECK(problems(R"({"pp": 8, "schedule": "paci", "paci_mode": "mem"})").empty());
  // Seven zero-bubble entries take optimizer_post_validation: reported once for another schedule.
  CHECK(problems(R"({"pp": 8, "optimizer_post_validation": true})") ==
        std::vector<std::string>{"/parallel/optimizer_post_validation: optimizer "
                                 "post-validation applies to the zero-bubble schedules (zb-h1, "
                                 "zb-h2, zb-1p, zb-2p, interleaved-zb, zb-v, dualpipev), not "
                                 "1f1b"});
  CHECK(problems(R"({"pp": 8, "schedule": "zb-h2", "optimizer_post_validation": true})").empty());
  // The asynchronous schedules share their rules; ZeRO-3's rule is the zero-3 entry's.
  CHECK(problems(R"({"dp": 8, "zero_stage": 2, "schedule": "pipedream"})").size() == 1);
  CHECK(problems(R"({"dp": 8, "schedule": "pipedream"})").empty());
  CHECK(problems(R"({"dp": 8, "zero_stage": 3, "schedule": "zb-h1"})") ==
        std::vector<std::string>{
            "/parallel/zero_stage: zero_stage 3 is modelled with gpipe and 1f1b only (got zb-h1)"});
  CHECK(problems(R"({"dp": 8, "zero_stage": 3, "schedule": "1f1b"})").empty());
}

TEST_CASE("the parser takes choices and ranges from the registry") {
  // A range of a registered parameter: interleaved-1f1b's chunks, 1 to 64.
  const auto& chunks = strat::registered_parameter("/parallel/chunks");
  CHECK(chunks.min == 1);
  CHECK(chunks.max == 64);
  CHECK(problems(R"({"pp": 8, "schedule": "interleaved-1f1b", "chunks": 65})") ==
        std::vector<std::string>{"/parallel/chunks: expected an integer in [1, 64], got 65"});
  // An entry's scenario value: the choices are the registry's, in its order.
  const auto bad = problems(R"({"pp": 8, "tp_placement": "sideways"})");
  REQUIRE(bad.size() == 1);
  CHECK(bad[0] ==
        "/parallel/tp_placement: expected one of \"megatron\", \"tsp\", \"vanilla\", "
        "\"btp\", got \"sideways\"");
  CHECK_THROWS_AS(strat::registered_parameter("/parallel/no_such_key"), std::logic_error);
}

TEST_CASE(
    "the schedules' closed forms give their papers' bubbles (the planner's screen reads them)") {
  using strat::PipelineSchedule;
  // P equal stages, F = 1, B = 2 (no split) or B = 1, W = 1 (zero bubble), free transfers.
  auto times = [](int m, int p, int v, double f, double b, double w) {
    strat::StagePassTimes t;
    t.micro_batches = m;
    t.stages = p;
    t.chunks = v;
    t.sum_fbw = p * (f + b + w);
    t.max_fb = f + b;
    t.max_fbw = f + b + w;
    t.f = f;
    t.b = b;
    t.w = w;
    return t;
  };
  auto time = [](PipelineSchedule s, const strat::StagePassTimes& t) {
    return strat::schedule_traits(s).pipeline_time(t);
  };
  const int m = 8, p = 4;
  // GPipe / 1F1B: (m + P - 1)(F + B), bubble (P - 1) / (m + P - 1) (Huang et al. 2019).
  CHECK(time(PipelineSchedule::kOneFOneB, times(m, p, 1, 1, 2, 0)) == 3.0 * (m + p - 1));
  CHECK(time(PipelineSchedule::kGpipe, times(m, p, 1, 1, 2, 0)) == 3.0 * (m + p - 1));
  // Interleaved with v chunks: m (F + B) + (P - 1)(F + B) / v (Narayanan et al. 2021).
  CHECK(time(PipelineSchedule::kInterleaved, times(m, p, 2, 1, 2, 0)) ==
        3.0 * m + 3.0 * (p - 1) / 2);
  // ZB-H1: m (F + B + W) + (P - 1)(F + B - W); ZB-H2 with m >= 2P: + (P - 1)(F + B - 2W)
  // (Qi et al. 2024, sec. 3); ZB-2p with m >= 2P: no bubble; asynchronous: m (F + B + W).
  CHECK(time(PipelineSchedule::kZbH1, times(m, p, 1, 1, 1, 1)) == 3.0 * m + (p - 1));
  CHECK(time(PipelineSchedule::kZbH2, times(m, p, 1, 1, 1, 1)) == 3.0 * m);
  CHECK(time(PipelineSchedule::kZbH2, times(m, 5, 1, 1, 1, 1)) == 3.0 * m + 4);  // m < 2P: as H1
  CHECK(time(PipelineSchedule::kZb2p, times(m, p, 1, 1, 1, 1)) == 3.0 * m);
  CHECK(time(PipelineSchedule::kPaci, times(m, p, 1, 1, 2, 0)) == 3.0 * m);
  // Staleness: PipeDream P - 1, 2BW 1, PACI ceil((P - 1) / m), flush schedules 0.
  CHECK(strat::schedule_traits(PipelineSchedule::kPipeDream).staleness(p, m) == p - 1);
  CHECK(strat::schedule_traits(PipelineSchedule::kPipeDream2BW).staleness(p, m) == 1);
  CHECK(strat::schedule_traits(PipelineSchedule::kPaci).staleness(9, m) == 1);
  CHECK(strat::schedule_traits(PipelineSchedule::kPaci).staleness(10, m) == 2);
  CHECK_FALSE(static_cast<bool>(strat::schedule_traits(PipelineSchedule::kOneFOneB).staleness));
}
