#pragma once
// parasim::cli list JSON — what `parasim list --json` prints and the Python API's presets() and
// registry() return: the model and cluster presets with their sources, and every registry entry
// (strategies/registry/registry.hpp) with its parameters, read from the tables themselves.
// Units are in the key names (_bytes, _per_s) or given per parameter ("unit").

#include <nlohmann/json.hpp>

namespace parasim::cli {

// {"models": [...], "clusters": [...]}, in the presets' own order.
nlohmann::ordered_json presets_json();

// {"kinds": [{"kind", "scenario_key", "about", "shared_parameters", "entries": [...]}, ...]},
// the kinds in kAllEntryKinds order, the entries in registry order.
nlohmann::ordered_json registry_json();

}  // namespace parasim::cli
