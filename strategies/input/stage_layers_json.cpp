#include "strategies/input/stage_layers_json.hpp"

#include <fmt/format.h>

#include <vector>

#include "strategies/input/stage_split.hpp"

namespace parasim::strat {

using cost::Diagnostics;
using nlohmann::json;

void read_stage_layers(const nlohmann::json& node, const std::string& path, Diagnostics& d,
                       const ScenarioLimits& limits, ParallelSpec& p) {
  if (!node.is_array() || node.empty()) {
    d.add(path,
          "expected a non-empty list of layer counts, one per pipeline stage (with "
          "interleaving one per virtual stage, in the order the layers run)");
    return;
  }
  if (node.size() > static_cast<std::size_t>(limits.max_layers)) {
    d.add(path, fmt::format("{} entries is over the limit of {} (one per stage, each stage at "
                            "least one layer)",
                            node.size(), limits.max_layers));
    return;
  }
  std::vector<int> counts;
  bool ok = true;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const json& v = node[i];
    const bool integer = v.is_number_integer() || v.is_number_unsigned();
    // 0: a virtual stage of only a no-op layer (checked against chunks by the scenario rules).
    if (!integer || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() > limits.max_layers) {
      d.add(fmt::format("{}/{}", path, i),
            fmt::format("expected a layer count, an integer in [0, {}] (0 only for a virtual "
                        "stage with interleaving), got {}",
                        limits.max_layers, v.dump()));
      ok = false;
      continue;
    }
    counts.push_back(static_cast<int>(v.get<std::int64_t>()));
  }
  if (ok) p.stage_layers = std::move(counts);
}

// Megatron-LM's uneven split (megatron/core/transformer/transformer_block.py,
// get_transformer_layer_offset, and TransformerConfig's checks): the first and/or last stage hold
// the given counts, the other pp - (1 or 2) stages share the remaining layers evenly.
void resolve_stage_layers(const EdgeStageLayers& edge, Diagnostics& d, Scenario& s) {
  if (!edge.first && !edge.last) return;
  auto& p = s.parallel;
  const std::string at =
      edge.first ? "/parallel/first_stage_layers" : "/parallel/last_stage_layers";
  if (!p.stage_layers.empty()) {
    d.add(at,
          "give either parallel.stage_layers or first_stage_layers / last_stage_layers, "
          "not both");
    return;
  }
  if (p.pp < 2) {
    d.add(at, fmt::format("uneven first or last stages need pp >= 2 (got pp {})", p.pp));
    return;
  }
  if (p.chunks > 1) {
    d.add(at,
          "with interleaving (chunks > 1) give parallel.stage_layers, one count per virtual "
          "stage, instead of first_stage_layers / last_stage_layers");
    return;
  }
  const long long first = edge.first.value_or(0), last = edge.last.value_or(0);
  const int middle = p.pp - (edge.first ? 1 : 0) - (edge.last ? 1 : 0);
  const long long rest = s.model.layers - first - last;
  auto count = [](const std::optional<std::int64_t>& v) {
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  };
  std::vector<int> split = edge_stage_layers(s.model.layers, p.pp, count(edge.first),
                                             count(edge.last));
  if (split.empty()) {
    d.add(at, fmt::format("{} layers less {}{}{} leave {} for the other {} stage{}: they must "
                          "share them evenly, at least one each",
                          s.model.layers, edge.first ? fmt::format("{} on the first", first) : "",
                          edge.first && edge.last ? " and " : "",
                          edge.last ? fmt::format("{} on the last stage", last) : " stage", rest,
                          middle, middle == 1 ? "" : "s"));
    return;
  }
  p.stage_layers = std::move(split);
}

}  // namespace parasim::strat
