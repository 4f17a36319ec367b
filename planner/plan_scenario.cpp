#include "planner/plan_scenario.hpp"

#include "costmodel/json_fields.hpp"
#include "strategies/registry/registry.hpp"
#include "strategies/schedules/pipeline_schedule.hpp"

namespace parasim::plan {

using nlohmann::json;

json scenario_json(const json& document, const strat::Scenario& base, const Candidate& c) {
  json s = document;
  s.erase("search");
  s["description"] = "Planned by parasim plan from " + base.source_file + ": " + describe(c) + ".";
  const cost::ClusterSpec cluster = cluster_for_gpus(base.cluster, c.gpus);
  if (s["cluster"].is_string()) s["cluster"] = json{{"preset", s["cluster"]}};
  s["cluster"]["nodes"] = cluster.nodes;
  if (cluster.gpus_per_node != base.cluster.gpus_per_node) {
    s["cluster"]["gpus_per_node"] = cluster.gpus_per_node;  // part of one node
  }
  json& p = s["parallel"];
  if (!p.is_object()) p = json::object();
  p["dp"] = c.dp;
  p["tp"] = c.tp;
  p["pp"] = c.pp;
  p["cp"] = c.cp;
  // The candidate's exchange (ring, the default, written only where the document wrote one).
  const bool wrote_variant = p.contains("cp_variant");
  p.erase("cp_variant");
  p.erase("cp_a2a_size");
  if (c.cp > 1 && (wrote_variant || c.cp_comm != strat::CpComm::kRing)) {
    p["cp_variant"] = strat::cp_comm_name(c.cp_comm);
  }
  if (c.cp > 1 && c.cp_comm == strat::CpComm::kAllToAllP2p) p["cp_a2a_size"] = c.cp_a2a_size;
  p["sequence_parallel"] = c.sequence_parallel;
  p["schedule"] = strat::schedule_name(c.schedule);
  p["chunks"] = c.chunks;
  p["zero_stage"] = c.zero_stage;
  if (c.fsdp2) {
    p["sharding"] = "fsdp2";
  } else {
    p.erase("sharding");
    p.erase("fsdp");
  }
  if (c.offload != base.parallel.offload.flavour) {  // another flavour: its defaults
    for (const char* k : {"offload_fraction", "offload_overlap", "offload_pin_memory",
                          "offload_params"}) {
      p.erase(k);
    }
  }
  if (c.offload != cost::OffloadFlavour::kNone || p.contains("offload")) {
    p["offload"] = cost::offload_flavour_name(c.offload);
  }
  p["tp_placement"] = strat::tp_placement_name(c.placement);
  if (c.tp_overlap != strat::TpCommOverlap::kNone || p.contains("tp_comm_overlap")) {
    p["tp_comm_overlap"] = strat::tp_comm_overlap_name(c.tp_overlap);
  }
  if (base.model.moe.enabled()) {
    p["ep"] = c.ep;
    p["etp"] = expert_tp(c);
    p["moe_dispatcher"] = strat::moe_dispatcher_name(c.dispatcher);
  }
  // The stages as the candidate splits them (the user's own split is the "yours" row's, kept
  // when the candidate is that row with a split first/last cannot express).
  if (!c.own_stage_layers) p.erase("stage_layers");
  p.erase("first_stage_layers");
  p.erase("last_stage_layers");
  if (c.first_stage_layers > 0) p["first_stage_layers"] = c.first_stage_layers;
  if (c.last_stage_layers > 0) p["last_stage_layers"] = c.last_stage_layers;
  if (!strat::splits_weight_gradient(c.schedule)) p.erase("optimizer_post_validation");
  json& t = s["training"];
  t["micro_batch"] = c.micro_batch;
  t["recompute"] = cost::recompute_name(c.recompute);
  if (c.recompute != cost::Recompute::kFull) {  // Megatron's method goes with full only
    t.erase("recompute_method");
    t.erase("recompute_num_layers");
  }
  // Megatron's modules go with selective only (as apply_candidate clears them, candidate.cpp).
  if (c.recompute != cost::Recompute::kSelective) t.erase("recompute_modules");
  t["attention"] = c.attention == strat::AttentionKind::kFlash ? "flash" : "unfused";
  if (c.compile != base.training.framework.compile.enabled) {  // the candidate's torch.compile
    json& f = t["framework"];
    if (!f.is_object()) f = json{{"preset", base.training.framework.name}};
    f["compile"] = c.compile;
  }
  if (c.recipe != base.training.fp8.recipe) {  // another precision: fp8_with_recipe's options
    t.erase("fp8");
    const strat::Fp8Spec f = strat::fp8_with_recipe(base.training.fp8, c.recipe);
    if (!f.enabled()) {
      t["precision"] = cost::dtype_name(base.training.precision);
    } else {
      t["precision"] = "fp8";
      t["fp8"] = json{{"recipe", cost::quant_recipe_name(f.recipe)},
                      {"format", strat::fp8_format_name(f.format)},
                      {"param_gather", f.param_gather},
                      {"bf16_layers_at_start", f.bf16_layers_at_start},
                      {"bf16_layers_at_end", f.bf16_layers_at_end}};
    }
  }
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

}  // namespace parasim::plan
