// No scenario field is dropped silently: for every target, each key of the scenario's JSON
// Schema (docs/scenario.schema.json) is in the export's ledger (mapped, stated, not a trainer
// setting, unused in that scenario, or approximated/refused). A key added to the scenario fails
// here until its seam in planner/export maps it. And every pipeline schedule maps or is refused
// on every target (a schedule without a case throws).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <stdexcept>

#include "export_test_support.hpp"
#include "strategies/input/scenario.hpp"

using namespace parasim::test;
using nlohmann::json;
using parasim::exporter::FieldUse;
using parasim::exporter::Target;

namespace {

const json& resolve(const json& schema, const json& node) {
  if (node.contains("$ref")) {
    const std::string ref = node["$ref"];
    return schema["$defs"][ref.substr(std::string("#/$defs/").size())];
  }
  return node;
}

void leaves(const json& schema, const json& node_in, const std::string& path,
            std::set<std::string>& out, int depth = 0) {
  REQUIRE(depth < 20);
  const json& node = resolve(schema, node_in);
  bool inner = false;
  for (const char* alt : {"oneOf", "anyOf", "allOf"}) {
    if (node.contains(alt)) {
      for (const json& a : node[alt]) {
        const json& r = resolve(schema, a);
        if (r.contains("properties") || r.contains("oneOf") || r.contains("$ref")) {
          leaves(schema, a, path, out, depth + 1);
          inner = true;
        }
      }
    }
  }
  if (node.contains("properties")) {
    for (const auto& [key, sub] : node["properties"].items()) {
      leaves(schema, sub, path + "/" + key, out, depth + 1);
    }
    inner = true;
  }
  if (!inner) out.insert(path);
}

std::set<std::string> schema_leaves() {
  const json schema = json::parse(read_text(kSourceDir / "docs/scenario.schema.json"));
  std::set<std::string> out;
  leaves(schema, schema, "", out);
  return out;
}

bool covered(const std::string& leaf, const std::vector<parasim::exporter::FieldRecord>& ledger) {
  for (const auto& r : ledger) {
    if (leaf == r.path || leaf.rfind(r.path + "/", 0) == 0) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("the schema's keys are the ones the ledger test walks") {
  const auto keys = schema_leaves();
  for (const char* k : {"/model/layers", "/cluster/device/peak/bf16", "/training/grad_precision",
                        "/parallel/zero_stage", "/optimizer/stacking", "/model/low_rank/rank"}) {
    CHECK_MESSAGE(keys.count(k) == 1, k);
  }
  CHECK(keys.size() > 60);
}

TEST_CASE("every scenario field is accounted for by every target") {
  const auto keys = schema_leaves();
  for (const ExportCase& c : export_cases()) {
    const auto in = input_of(c);
    for (const TargetCase& t : target_cases()) {
      CAPTURE(c.display);
      CAPTURE(t.tag);
      const Outcome o = run_export(in, t, true);
      REQUIRE(o.result);
      for (const std::string& k : keys) {
        CHECK_MESSAGE(covered(k, o.result->ledger),
                      k << " is not in the " << t.tag << " export's ledger");
      }
      // Each difference is in the ledger as approximated.
      for (const auto& d : o.result->differences) {
        bool found = false;
        for (const auto& r : o.result->ledger) {
          found = found || (r.path == d.path && r.use == FieldUse::kApproximated);
        }
        CHECK_MESSAGE(found, d.path);
      }
    }
  }
}

TEST_CASE("an empty ledger covers nothing: the coverage check can fail") {
  CHECK_FALSE(covered("/model/layers", {}));
  CHECK(covered("/cluster/device/peak/bf16", {{"/cluster/device", FieldUse::kNotTrainer, ""}}));
  CHECK_FALSE(covered("/cluster/devices", {{"/cluster/device", FieldUse::kNotTrainer, ""}}));
}

TEST_CASE("every pipeline schedule maps or is refused on every target") {
  using parasim::strat::PipelineSchedule;
  for (PipelineSchedule sch : parasim::strat::kAllSchedules) {
    const std::string name = parasim::strat::schedule_name(sch);
    const bool async = sch == PipelineSchedule::kPipeDream ||
                       sch == PipelineSchedule::kPipeDream2BW || sch == PipelineSchedule::kPaci;
    const bool chunked = sch == PipelineSchedule::kInterleaved ||
                         sch == PipelineSchedule::kInterleavedZb ||
                         parasim::strat::places_chunks_in_v(sch);
    const std::string text = fmt::format(
        R"({{"model": "llama2-7b", "cluster": "dgx-h100",
            "training": {{"global_batch": {}, "micro_batch": 1}},
            "parallel": {{"dp": {}, "tp": 2, "pp": {}, "schedule": "{}", "chunks": {}}}}})",
        async ? 8 : 16, async ? 1 : 2, async ? 4 : 2, name, chunked ? 2 : 1);
    const auto in = parasim::exporter::parse_export_input(text, "schedule.json");
    for (const TargetCase& t : target_cases()) {
      CAPTURE(name);
      CAPTURE(t.tag);
      Outcome o;
      CHECK_NOTHROW(o = run_export(in, t, true));
      REQUIRE(o.result);
      bool recorded = false;
      for (const auto& r : o.result->ledger) {
        recorded = recorded || r.path == "/parallel/schedule" || r.path == "/parallel";
      }
      CHECK(recorded);
    }
  }
}
