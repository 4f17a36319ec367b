#include "planner/export/target_versions.hpp"

#include <stdexcept>

namespace parasim::exporter {

const std::vector<TargetVersion>& target_versions() {
  static const std::vector<TargetVersion> versions{
      {Target::kMegatron, "0.19.2", "megatron-core 0.19.2", {"0.19", "0.19.2"}, true},
      {Target::kDeepSpeed, "0.19.8", "DeepSpeed 0.19.8", {"0.19", "0.19.8"}, true},
      {Target::kTorchtitan, "0.3.0", "torchtitan 0.3.0", {"0.3", "0.3.0"}, true},
      {Target::kTorchtitan, "0.2.2", "torchtitan 0.2.2", {"0.2", "0.2.2"}, false},
      {Target::kShampoo,
       "f60660661194",
       "Distributed Shampoo (facebookresearch/optimizers "
       "f60660661194)",
       {"f60660661194", "f60660661194de26d3ee78bae6d15820ff8e583d"},
       true},
      {Target::kShampoo,
       "4c98e6e7d8a5",
       "DASH (IST-DASLab/ISTA-DASLab-Optimizers 4c98e6e7d8a5)",
       {"4c98e6e7d8a5", "4c98e6e7d8a58534efc4241220364de5e82f552c"},
       false},
  };
  return versions;
}

const TargetVersion& resolve_version(Target target, const std::string& requested, bool dash) {
  const TargetVersion* chosen = nullptr;
  std::string known;
  for (const TargetVersion& v : target_versions()) {
    if (v.target != target) continue;
    known += (known.empty() ? "" : ", ") + v.aliases.front() + " (" + v.label + ")";
    const bool wanted = target == Target::kShampoo ? (v.version == "4c98e6e7d8a5") == dash
                                                   : (requested.empty() ? v.is_default : false);
    bool named = false;
    for (const std::string& a : v.aliases) named = named || a == requested;
    if (requested.empty() ? wanted : named) chosen = &v;
  }
  if (chosen == nullptr) {
    throw std::invalid_argument("--version \"" + requested + "\" is not a version the " +
                                target_name(target) + " export knows (versions: " + known + ")");
  }
  if (target == Target::kShampoo && (chosen->version == "4c98e6e7d8a5") != dash) {
    throw std::invalid_argument(
        std::string("--version \"") + requested + "\" names " + chosen->label +
        ", but the scenario's optimizer is " + (dash ? "dash" : "shampoo") +
        " (the shampoo export writes Distributed Shampoo for shampoo, DASH for dash)");
  }
  return *chosen;
}

}  // namespace parasim::exporter
