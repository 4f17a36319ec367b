#pragma once
// parasim::strat registry — what parasim can model, listed for `parasim list strategies` and the
// docs: every parallel strategy and tensor-parallel placement, pipeline schedule, recompute mode,
// attention core and optimizer, with its scenario key, parameters (name, unit, default) and the
// paper it comes from.
//
// An explicit list (no static self-registration, which vanishes under static linking). A new
// strategy adds its entry here; a test checks that every schedule, placement, recompute mode,
// attention core and optimizer the scenario parser accepts is listed.

#include <string>
#include <vector>

namespace parasim::strat {

struct RegistryParameter {
  std::string name;     // scenario key
  std::string unit;     // "", "bytes", "GPUs", ...
  std::string default_value;
  std::string meaning;
};

struct RegistryEntry {
  std::string group;        // "parallel", "schedule", "recompute", "attention", "optimizer"
  std::string name;         // value or key in the scenario
  std::string description;  // one line
  std::string paper;        // citation with arXiv id
  std::vector<RegistryParameter> parameters;
};

const std::vector<RegistryEntry>& registry();

}  // namespace parasim::strat
