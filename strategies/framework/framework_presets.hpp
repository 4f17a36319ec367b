#pragma once
// parasim::strat framework presets — named, sourced FrameworkSpecs a scenario refers to by name
// (`"training": {"framework": "megatron-deepspeed"}`), like cluster and model presets. Every
// value has its source in framework_presets.cpp (code at a commit, a measurement, or an
// inference from both, marked so); docs/frameworks.md explains what each preset models.
//
// The list is an explicit table in a fixed order with unique names; default_framework() is the
// one a scenario gets when it names none (megatron-lm).

#include <string>
#include <string_view>
#include <vector>

#include "strategies/framework/framework.hpp"

namespace parasim::strat {

struct FrameworkPreset {
  std::string name;         // lookup key; equals spec.name
  std::string description;  // one line
  std::string source;       // the code and measurements the values come from
  FrameworkSpec spec;
};

// All presets, in a fixed order. Built once on first use; safe to call from several threads.
const std::vector<FrameworkPreset>& framework_presets();

// The preset with exactly this name, or nullptr.
const FrameworkPreset* find_framework_preset(std::string_view name);

// The framework of a scenario that names none: the "megatron-lm" preset.
const FrameworkSpec& default_framework();
inline constexpr std::string_view kDefaultFrameworkName = "megatron-lm";

}  // namespace parasim::strat
