#include "strategies/input/sharding_json.hpp"

#include <fmt/format.h>

#include "strategies/input/registered_fields.hpp"

namespace parasim::strat {

using cost::Diagnostics;
using cost::JsonObjectReader;
using nlohmann::json;

// parallel.sharding (a sharding entry's name) and parallel.zero_stage (its stage as a number,
// zero-N): either, or both when they agree.
const Entry* chosen_sharding(JsonObjectReader& r, Diagnostics& d) {
  const Entry* named = chosen_by_value(r, d, EntryKind::kSharding, false);
  const auto& zero = registered_parameter("/parallel/zero_stage");
  const auto z = r.integer("zero_stage", false, zero.min, zero.max);
  if (!z) return named;
  const Entry* numbered = find_entry_by_value(EntryKind::kSharding, fmt::format("zero-{}", *z));
  if (named != nullptr && std::get<ShardingTraits>(named->traits).zero_stage == *z) return named;
  if (named != nullptr) {
    d.add(r.child_path("sharding"),
          fmt::format("sharding \"{}\" contradicts zero_stage {} (zero_stage N is sharding "
                      "\"zero-N\", and fsdp2 shards as zero_stage 3); give one of them",
                      named->name, *z));
    return named;
  }
  return numbered;
}

// parallel.fsdp: FSDP2's options (Fsdp2Spec).
void read_fsdp(const json& node, Diagnostics& d, Fsdp2Spec& f) {
  JsonObjectReader r(node, "/parallel/fsdp", d);
  if (const json* raf = r.child("reshard_after_forward", false)) {
    const std::string path = r.child_path("reshard_after_forward");
    if (raf->is_boolean()) {
      f.reshard_after_forward = raf->get<bool>() ? Fsdp2Spec::kShardGroup : 1;
    } else if (raf->is_string() && raf->get<std::string>() == "default") {
      f.reshard_after_forward.reset();
    } else if (raf->is_number_integer() && raf->get<std::int64_t>() >= 1 &&
               raf->get<std::int64_t>() <= (1 << 20)) {
      f.reshard_after_forward = static_cast<int>(raf->get<std::int64_t>());
    } else {
      d.add(path,
            "expected \"default\", true, false, or a whole number from 1 to 1048576 (the "
            "ranks a unit stays sharded over after its forward)");
    }
  }
  if (auto n = registered_integer(r, "/parallel/fsdp/replicate"))
    f.replicate = static_cast<int>(*n);
  r.finish();
}

}  // namespace parasim::strat
