#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/runs/list_json.hpp"
#include "costmodel/cluster_presets.hpp"
#include "costmodel/units.hpp"
#include "strategies/input/model_presets.hpp"
#include "strategies/registry/registry.hpp"

namespace parasim::cli {
namespace {

void list_presets(std::ostream& out) {
  out << "Model presets (scenario key \"model\")\n";
  for (const auto& p : strat::model_presets()) {
    const auto& m = p.spec;
    // A mixture of experts: its active count and experts (the dense ffn is its first layers').
    const std::string experts =
        m.moe.enabled()
            ? fmt::format(" ({:.2f} B active), {} experts of {} top-{}",
                          static_cast<double>(m.active_params()) / 1e9, m.moe.experts,
                          m.moe.expert_ffn_hidden, m.moe.top_k)
            : std::string();
    out << fmt::format("  {:<14} {:>7.2f} B params{}, {} layers, hidden {}, {} heads ({} kv), "
                       "ffn {}, vocab {}, seq {}\n",
                       p.name, static_cast<double>(m.total_params()) / 1e9, experts, m.layers,
                       m.hidden, m.heads, m.kv_heads, m.ffn_hidden, m.vocab, m.seq_len);
    out << fmt::format("  {:<14} {}\n  {:<14} source: {}\n", "", p.description, "", p.source);
  }
  out << "\nCluster presets (scenario key \"cluster\"; figures are datasheet figures unless the "
         "source says assumption)\n";
  for (const auto& p : cost::cluster_presets()) {
    const auto& c = p.spec;
    const std::string mesh =
        c.intra_node.peer_bandwidth.bytes_per_s > 0
            ? fmt::format(" (mesh: {} to any one peer)",
                          cost::format_bandwidth(c.intra_node.peer_bandwidth))
            : std::string();
    const std::string fp8 =
        c.device.peak_fp8.flop_per_s > 0
            ? fmt::format(", {} fp8", cost::format_flop_rate(c.device.peak_fp8))
            : std::string();
    out << fmt::format("  {:<16} {} x {} ({}) per node: {} bf16{}, {} HBM at {}, intra-node {} per "
                       "GPU{}, NIC {} per GPU\n",
                       p.name, c.gpus_per_node, c.device.name,
                       cost::architecture_name(c.device.architecture),
                       cost::format_flop_rate(c.device.peak_bf16), fp8,
                       cost::format_bytes(c.device.hbm_capacity),
                       cost::format_bandwidth(c.device.hbm_bandwidth),
                       cost::format_bandwidth(c.intra_node.bandwidth), mesh,
                       cost::format_bandwidth(c.inter_node.bandwidth));
    out << fmt::format("  {:<16} {}\n  {:<16} source: {}\n", "", p.description, "", p.source);
  }
}

void list_parameter(std::ostream& out, const strat::ParameterSpec& p) {
  out << fmt::format("  {:<21}   {} ({}{}default {}; {}): {}\n", "", p.path, p.unit,
                     p.unit.empty() ? "" : ", ", p.default_value, p.legal_values(), p.meaning);
}

// Every entry of the registry (strategies/registry/registry.hpp), grouped by kind.
void list_strategies(std::ostream& out) {
  bool first = true;
  for (strat::EntryKind kind : strat::kAllEntryKinds) {
    const strat::KindInfo& info = strat::kind_info(kind);
    out << fmt::format("{}{} (scenario: {}): {}\n", first ? "" : "\n", info.title,
                       info.scenario_key, info.about);
    first = false;
    if (!info.shared_parameters.empty()) {
      out << fmt::format("  {:<21} parameters of every {}:\n", "", info.title);
      for (const auto& p : info.shared_parameters) list_parameter(out, p);
    }
    for (const strat::Entry* e : strat::entries_of(kind)) {
      const std::string value =
          e->value == e->name ? std::string() : fmt::format(" (scenario value {})", e->value);
      out << fmt::format("  {:<21} {}{}\n  {:<21} source: {}\n", e->name, e->description, value,
                         "", e->paper);
      if (!e->builder.empty()) out << fmt::format("  {:<21} built by: {}\n", "", e->builder);
      for (const auto& p : e->parameters) list_parameter(out, p);
    }
  }
}

}  // namespace

int run_list(const std::string& what, std::ostream& out, std::ostream& err, bool json) {
  if (json && (what.empty() || what == "presets" || what == "strategies")) {
    nlohmann::ordered_json j;
    if (what.empty() || what == "presets") j["presets"] = presets_json();
    if (what.empty() || what == "strategies") j["strategies"] = registry_json();
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  if (what.empty() || what == "presets") list_presets(out);
  if (what.empty()) out << "\n";
  if (what.empty() || what == "strategies") list_strategies(out);
  if (!what.empty() && what != "presets" && what != "strategies") {
    err << "parasim list: unknown topic \"" << what << "\" (expected presets or strategies)\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace parasim::cli
