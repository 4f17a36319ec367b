#include "strategies/input/registered_fields.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace parasim::strat {

using cost::Diagnostics;
using cost::JsonObjectReader;

std::optional<std::string> choice_of(JsonObjectReader& r, Diagnostics& d, std::string_view key,
                                     bool required, const std::vector<std::string>& allowed) {
  auto s = r.string(key, required);
  if (!s || std::find(allowed.begin(), allowed.end(), *s) != allowed.end()) return s;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "\"" : ", \"") + a + "\"";
  d.add(r.child_path(key), fmt::format("expected one of {}, got \"{}\"", list, *s));
  return std::nullopt;
}
std::optional<std::string> registered_choice(JsonObjectReader& r, Diagnostics& d,
                                             std::string_view path) {
  const ParameterSpec& p = registered_parameter(path);
  return choice_of(r, d, p.key(), false, p.choices);
}
std::optional<std::int64_t> registered_integer(JsonObjectReader& r, std::string_view path) {
  const ParameterSpec& p = registered_parameter(path);
  return r.integer(p.key(), false, p.min, p.max);
}
// The entry of `kind` the scenario names at the kind's key (its legal values: the entries').
const Entry* chosen_by_value(JsonObjectReader& r, Diagnostics& d, EntryKind kind, bool required) {
  const KindInfo& info = kind_info(kind);
  const std::string key = info.scenario_key.substr(info.scenario_key.rfind('/') + 1);
  const auto value = choice_of(r, d, key, required, scenario_values(kind));
  return value ? find_entry_by_value(kind, *value) : nullptr;
}

}  // namespace parasim::strat
