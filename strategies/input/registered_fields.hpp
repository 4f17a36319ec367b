#pragma once
// parasim::strat scenario fields whose legal values or ranges the strategy registry holds
// (strategies/registry/): read under a JsonObjectReader, each problem at its path. Internal to the
// scenario parser and its section readers.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/diagnostics.hpp"
#include "costmodel/json_fields.hpp"
#include "strategies/registry/registry.hpp"

namespace parasim::strat {

// JsonObjectReader::choice over a list built at run time, with the same message.
std::optional<std::string> choice_of(cost::JsonObjectReader& r, cost::Diagnostics& d,
                                     std::string_view key, bool required,
                                     const std::vector<std::string>& allowed);
// The registered parameter at `path`: its choices, or its whole-number range.
std::optional<std::string> registered_choice(cost::JsonObjectReader& r, cost::Diagnostics& d,
                                             std::string_view path);
std::optional<std::int64_t> registered_integer(cost::JsonObjectReader& r, std::string_view path);
// The entry of `kind` the scenario names at the kind's key (its legal values: the entries').
const Entry* chosen_by_value(cost::JsonObjectReader& r, cost::Diagnostics& d, EntryKind kind,
                             bool required);

}  // namespace parasim::strat
