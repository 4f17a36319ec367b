#include "cli/runs/list_json.hpp"

#include "costmodel/cluster_presets.hpp"
#include "strategies/input/model_presets.hpp"
#include "strategies/registry/registry.hpp"

namespace parasim::cli {
namespace {

using nlohmann::ordered_json;

ordered_json model_json(const strat::ModelPreset& p) {
  const strat::ModelSpec& m = p.spec;
  ordered_json j{{"name", p.name},
                 {"description", p.description},
                 {"source", p.source},
                 {"params", m.total_params()},
                 {"active_params", m.active_params()},
                 {"layers", m.layers},
                 {"hidden", m.hidden},
                 {"heads", m.heads},
                 {"kv_heads", m.kv_heads},
                 {"ffn_hidden", m.ffn_hidden},
                 {"vocab", m.vocab},
                 {"seq_len", m.seq_len}};
  j["moe"] = m.moe.enabled() ? ordered_json{{"experts", m.moe.experts},
                                            {"top_k", m.moe.top_k},
                                            {"expert_ffn_hidden", m.moe.expert_ffn_hidden}}
                             : ordered_json(nullptr);
  return j;
}

ordered_json cluster_json(const cost::ClusterPreset& p) {
  const cost::ClusterSpec& c = p.spec;
  const cost::DeviceSpec& d = c.device;
  return {{"name", p.name},
          {"description", p.description},
          {"source", p.source},
          {"device", d.name},
          {"architecture", cost::architecture_name(d.architecture)},
          {"gpus_per_node", c.gpus_per_node},
          {"peak_bf16_flop_per_s", d.peak_bf16.flop_per_s},
          {"peak_fp8_flop_per_s", d.peak_fp8.flop_per_s},
          {"hbm_bytes", d.hbm_capacity.value},
          {"hbm_bandwidth_bytes_per_s", d.hbm_bandwidth.bytes_per_s},
          {"intra_node_bandwidth_bytes_per_s", c.intra_node.bandwidth.bytes_per_s},
          {"inter_node_bandwidth_bytes_per_s", c.inter_node.bandwidth.bytes_per_s}};
}

ordered_json parameter_json(const strat::ParameterSpec& p) {
  ordered_json j{{"path", p.path},
                 {"unit", p.unit},
                 {"default", p.default_value},
                 {"legal_values", p.legal_values()},
                 {"meaning", p.meaning}};
  if (!p.choices.empty()) j["choices"] = p.choices;
  if (p.is_whole_number()) j["range"] = {p.min, p.max};
  return j;
}

ordered_json parameters_json(const std::vector<strat::ParameterSpec>& parameters) {
  ordered_json list = ordered_json::array();
  for (const auto& p : parameters) list.push_back(parameter_json(p));
  return list;
}

}  // namespace

ordered_json presets_json() {
  ordered_json models = ordered_json::array();
  for (const auto& p : strat::model_presets()) models.push_back(model_json(p));
  ordered_json clusters = ordered_json::array();
  for (const auto& p : cost::cluster_presets()) clusters.push_back(cluster_json(p));
  return {{"models", models}, {"clusters", clusters}};
}

ordered_json registry_json() {
  ordered_json kinds = ordered_json::array();
  for (strat::EntryKind kind : strat::kAllEntryKinds) {
    const strat::KindInfo& info = strat::kind_info(kind);
    ordered_json entries = ordered_json::array();
    for (const strat::Entry* e : strat::entries_of(kind)) {
      entries.push_back({{"name", e->name},
                         {"value", e->value},
                         {"description", e->description},
                         {"source", e->paper},
                         {"built_by", e->builder},
                         {"parameters", parameters_json(e->parameters)}});
    }
    kinds.push_back({{"kind", info.title},
                     {"scenario_key", info.scenario_key},
                     {"about", info.about},
                     {"shared_parameters", parameters_json(info.shared_parameters)},
                     {"entries", entries}});
  }
  return {{"kinds", kinds}};
}

}  // namespace parasim::cli
