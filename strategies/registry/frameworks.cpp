// Framework presets as registry entries: the table is framework_presets.cpp's (one list, its
// sources there); the registry lists it beside the strategies.
#include "strategies/framework/framework_presets.hpp"
#include "strategies/registry/kind_lists.hpp"

namespace parasim::strat {

std::vector<Entry> framework_entries() {
  std::vector<Entry> out;
  for (const FrameworkPreset& p : framework_presets()) {
    Entry e;
    e.kind = EntryKind::kFramework;
    e.name = e.value = p.name;
    e.description = p.description;
    e.paper = p.source;
    e.builder = "host_emission.cpp (host stream), data_parallel_emission.cpp (gradient policy)";
    e.traits = FrameworkTraits{};
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace parasim::strat
