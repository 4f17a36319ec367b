#include "planner/plan_scenario.hpp"

#include "costmodel/json_fields.hpp"

namespace parasim::plan {

using nlohmann::json;

json scenario_json(const json& document, const strat::Scenario& base, const Candidate& c) {
  json s = document;
  s.erase("search");
  s["description"] = "Planned by parasim plan from " + base.source_file + ": " + describe(c) + ".";
  const int gpn = base.cluster.gpus_per_node;
  const int nodes = c.gpus >= gpn ? c.gpus / gpn : 1;
  if (s["cluster"].is_string()) s["cluster"] = json{{"preset", s["cluster"]}};
  s["cluster"]["nodes"] = nodes;
  json& p = s["parallel"];
  if (!p.is_object()) p = json::object();
  p["dp"] = c.dp;
  p["tp"] = c.tp;
  p["pp"] = c.pp;
  p["cp"] = c.cp;
  p["sequence_parallel"] = c.sequence_parallel;
  p["schedule"] = strat::schedule_name(c.schedule);
  p["chunks"] = c.chunks;
  p["zero_stage"] = c.zero_stage;
  p["tp_placement"] = strat::tp_placement_name(c.placement);
  json& t = s["training"];
  t["micro_batch"] = c.micro_batch;
  t["recompute"] = cost::recompute_name(c.recompute);
  t["attention"] = c.attention == strat::AttentionKind::kFlash ? "flash" : "unfused";
  if (c.optimizer != strat::OptimizerKind::kAdamW || s.contains("optimizer")) {
    json& o = s["optimizer"];
    o["name"] = strat::optimizer_name(c.optimizer);
    if (c.optimizer != strat::OptimizerKind::kAdamW) {
      o["stacking"] = strat::stacking_name(c.stacking);
      o["block_size"] = c.block_size;
    }
  }
  return s;
}

strat::Scenario load_scenario_or_plan(const std::string& path, const strat::ScenarioLimits& limits) {
  cost::Diagnostics d(path);
  const auto text = cost::read_input_file(path, limits.max_file_bytes, "scenario", d);
  if (!text) throw cost::InputError(std::move(d));
  const json doc = json::parse(*text, nullptr, false);
  if (doc.is_object() && doc.contains("parasim_plan")) {
    if (!doc["parasim_plan"].is_number_integer() || doc["parasim_plan"].get<long long>() != 1) {
      d.add("/parasim_plan", "expected 1 (this parasim reads plan files of version 1)");
      throw cost::InputError(std::move(d));
    }
    if (!doc.contains("scenario") || !doc["scenario"].is_object()) {
      d.add("/scenario", "expected the planned scenario (an object)");
      throw cost::InputError(std::move(d));
    }
    return strat::parse_scenario(doc["scenario"].dump(), path + " (/scenario)", limits);
  }
  return strat::parse_scenario(*text, path, limits);
}

}  // namespace parasim::plan
