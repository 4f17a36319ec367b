// The JSON Schema's and the docs' lists of strategies, checked against the registry: the schema's
// choice lists (enum arrays and whole-number ranges) are generated from the registry and compared
// with docs/scenario.schema.json, and every entry must be named in the docs.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "strategies/registry/registry.hpp"
#include "../support/test_support.hpp"

using namespace parasim;
using nlohmann::json;
using strat::EntryKind;
using test::kSourceDir;

namespace {

const json& schema() {
  static const json s = json::parse(test::read_text(kSourceDir / "docs" / "scenario.schema.json"));
  return s;
}

// "/parallel/chunks" -> the schema's property: /$defs/parallel/properties/chunks.
// Nested objects: "/training/fp8/recipe" -> /$defs/training/properties/fp8/properties/recipe.
json::json_pointer schema_pointer(const std::string& scenario_path) {
  auto slash = scenario_path.find('/', 1);
  std::string out = "/$defs/" + scenario_path.substr(1, slash - 1);
  while (slash != std::string::npos) {
    const auto next = scenario_path.find('/', slash + 1);
    out += "/properties/" + scenario_path.substr(slash + 1, next - slash - 1);
    slash = next;
  }
  return json::json_pointer(out);
}

json strings(const std::vector<std::string>& v) { return json(v); }

// The schema's enum lists generated from the registry: pointer -> expected array.
std::vector<std::pair<std::string, json>> generated_enums() {
  std::vector<std::pair<std::string, json>> out;
  for (EntryKind kind : strat::kAllEntryKinds) {
    const auto& info = strat::kind_info(kind);
    if (kind == EntryKind::kFramework) {
      out.emplace_back("/$defs/framework_preset_name/enum",
                       strings(strat::scenario_values(kind)));
      continue;
    }
    out.emplace_back(schema_pointer(info.scenario_key).to_string() + "/enum",
                     strings(strat::scenario_values(kind)));
  }
  // The planner's search axes name entries (DASH's two stackings apart).
  for (const auto& [key, kind] : {std::pair{"tp_placement", EntryKind::kTpPlacement},
                                  std::pair{"optimizer", EntryKind::kOptimizer},
                                  std::pair{"attention", EntryKind::kAttention},
                                  std::pair{"recompute", EntryKind::kRecompute},
                                  std::pair{"sharding", EntryKind::kSharding},
                                  std::pair{"precision", EntryKind::kPrecision},
                                  std::pair{"tp_comm_overlap", EntryKind::kTpCommOverlap}}) {
    out.emplace_back(std::string("/properties/search/properties/") + key + "/items/enum",
                     strings(strat::entry_names(kind)));
  }
  for (const strat::Entry& e : strat::registry_entries()) {
    for (const auto& p : e.parameters) {
      if (!p.choices.empty()) {
        out.emplace_back(schema_pointer(p.path).to_string() + (p.list ? "/items/enum" : "/enum"),
                         strings(p.choices));
      }
    }
  }
  return out;
}

}  // namespace

TEST_CASE("docs/scenario.schema.json's choice lists are the registry's") {
  const auto enums = generated_enums();
  CHECK(enums.size() >= 16);
  for (const auto& pointer_and_list : enums) {  // no structured binding near doctest macros
    const std::string at = pointer_and_list.first;
    const json& expected = pointer_and_list.second;
    INFO(at);
    const json::json_pointer ptr(at);
    REQUIRE(schema().contains(ptr));
    CHECK(schema().at(ptr) == expected);
  }
  // Whole-number parameters: the schema's minimum (and maximum, where it states one).
  std::vector<const strat::ParameterSpec*> ranged;
  for (EntryKind kind : strat::kAllEntryKinds) {
    for (const auto& p : strat::kind_info(kind).shared_parameters) ranged.push_back(&p);
  }
  for (const strat::Entry& e : strat::registry_entries()) {
    for (const auto& p : e.parameters) ranged.push_back(&p);
  }
  for (const strat::ParameterSpec* p : ranged) {
    if (!p->is_whole_number()) continue;
    const std::string path = p->path;
    INFO(path);
    const json& property = schema().at(schema_pointer(path));
    CHECK(property.at("minimum") == p->min);
    if (property.contains("maximum")) CHECK(property.at("maximum") == p->max);
  }
  // ZeRO stages: the ZeRO entries' stages are the schema's range, every stage in it (FSDP2 is
  // zero_stage 3's sharding by another name, not a stage).
  const json& zero = schema().at(schema_pointer("/parallel/zero_stage"));
  std::vector<int> stages;
  for (const strat::Entry* e : strat::entries_of(EntryKind::kSharding)) {
    const auto& t = std::get<strat::ShardingTraits>(e->traits);
    if (!t.fsdp2) stages.push_back(t.zero_stage);
  }
  REQUIRE_FALSE(stages.empty());
  CHECK(zero.at("minimum") == stages.front());
  CHECK(zero.at("maximum") == stages.back());
  for (std::size_t i = 0; i < stages.size(); ++i) {
    CHECK(stages[i] == stages.front() + static_cast<int>(i));
  }
}

TEST_CASE("every registry entry is named in the docs") {
  std::string docs;
  for (const char* file : {"scenario.md", "schedules.md", "frameworks.md", "result.md"}) {
    docs += test::read_text(kSourceDir / "docs" / file);
  }
  for (const strat::Entry& e : strat::registry_entries()) {
    const std::string name = e.name;
    INFO(name);
    CHECK(docs.find("`" + name + "`") != std::string::npos);
  }
}
