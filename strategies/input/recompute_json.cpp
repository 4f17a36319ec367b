#include "strategies/input/recompute_json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "strategies/registry/registry.hpp"

namespace parasim::strat {

void read_recompute_modules(const nlohmann::json& node, const std::string& path,
                            cost::Diagnostics& d, cost::RecomputeModules& out) {
  const ParameterSpec& spec = registered_parameter("/training/recompute_modules");
  if (!node.is_array()) {
    d.add(path, fmt::format("expected a list of module names ({}), got {}", spec.legal_values(),
                            node.dump()));
    return;
  }
  cost::RecomputeModules m;
  m.core_attn = false;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = fmt::format("{}/{}", path, i);
    const auto& v = node[i];
    if (!v.is_string() || std::find(spec.choices.begin(), spec.choices.end(),
                                    v.get<std::string>()) == spec.choices.end()) {
      d.add(at, fmt::format("expected one of {}, got {}", spec.legal_values(), v.dump()));
      continue;
    }
    const std::string name = v.get<std::string>();
    if (!seen.insert(name).second) {
      d.add(at, fmt::format("\"{}\" is listed twice", name));
    } else if (name == "core_attn") {
      m.core_attn = true;
    } else if (name == "mlp") {
      m.mlp = true;
    } else if (name == "layernorm") {
      m.layernorm = true;
    } else if (name == "moe") {
      m.moe = true;
    } else if (name == "moe_act") {
      m.moe_act = true;
    } else if (name == "shared_experts") {
      m.shared_experts = true;
    } else if (name == "mla_up_proj") {
      m.mla_up_proj = true;
    }
  }
  out = m;
}

}  // namespace parasim::strat
