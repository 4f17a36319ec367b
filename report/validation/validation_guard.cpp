#include "report/validation/validation_guard.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "costmodel/diagnostics.hpp"
#include "costmodel/json_fields.hpp"

namespace parasim::validation {
namespace {

using cost::Diagnostics;
using cost::JsonObjectReader;
using nlohmann::json;

constexpr std::size_t kMaxGuardBytes = std::size_t{1} << 20;  // 1 MiB: a guard is a few lines

std::optional<double> nullable_pct(JsonObjectReader& r, std::string_view key, Diagnostics& d) {
  const json* j = r.child(key, true);
  if (j == nullptr || j->is_null()) return std::nullopt;
  if (!j->is_number()) {
    d.add(r.child_path(key),
          "expected a number (percent) or null, got " + cost::json_type_name(*j));
    return std::nullopt;
  }
  return j->get<double>();
}

GuardEntry read_entry(const json& node, const std::string& path, Diagnostics& d) {
  GuardEntry e;
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return e;
  if (auto n = r.integer("simulated", true, 0, 1 << 30)) e.simulated = static_cast<std::size_t>(*n);
  e.mae_pct = nullable_pct(r, "mae_pct", d);
  e.bias_pct = nullable_pct(r, "bias_pct", d);
  r.finish();
  return e;
}

const GroupStats* find_group(const std::vector<GroupStats>& groups, GroupScope scope,
                             const std::string& name) {
  for (const GroupStats& g : groups) {
    if (g.scope == scope && g.name == name) return &g;
  }
  return nullptr;
}

}  // namespace

Guard load_guard(const std::string& path) {
  Diagnostics d(path);
  const std::optional<std::string> text =
      cost::read_input_file(path, kMaxGuardBytes, "validation guard", d);
  if (!text) throw cost::InputError(std::move(d));
  const std::optional<json> document = cost::parse_json_document(*text, d);
  if (!document) throw cost::InputError(std::move(d));
  const json& root = *document;
  Guard g;
  g.path = path;
  JsonObjectReader r(root, "", d);
  if (!r.valid()) throw cost::InputError(std::move(d));
  if (auto v = r.integer("parasim_validation_guard", true, 0, 1 << 30); v && *v != 1) {
    d.add("/parasim_validation_guard",
          fmt::format("expected 1 (the guard format this parasim reads), got {}", *v));
  }
  r.string("about", false);
  if (auto c = r.string("recorded_at_commit", true)) g.recorded_at_commit = *c;
  if (auto t = r.number("mae_tolerance_pct_points", true, 0, 100)) g.tolerance_pct_points = *t;
  if (const json* o = r.child("overall", true)) g.overall = read_entry(*o, "/overall", d);
  if (const json* s = r.child("sources", true)) {
    if (!s->is_object()) {
      d.add("/sources",
            "expected an object (source name -> entry), got " + cost::json_type_name(*s));
    } else {
      for (const auto& [name, entry] : s->items()) {
        g.sources[name] = read_entry(entry, r.child_path("sources") + "/" + name, d);
      }
    }
  }
  r.finish();
  if (!d.ok()) throw cost::InputError(std::move(d));
  return g;
}

GuardVerdict check_guard(const Guard& guard, const std::vector<GroupStats>& groups) {
  GuardVerdict v;
  const auto compare = [&](const std::string& label, const GuardEntry& recorded,
                           const GroupStats* now) {
    if (now == nullptr) {
      v.passed = false;
      v.text += fmt::format("  {}: recorded in the guard but not in this run: FAILED\n", label);
      return;
    }
    if (!recorded.mae_pct) {
      v.text += fmt::format("  {}: no MAE recorded ({} simulated now): not guarded\n", label,
                            now->stats.simulated);
      return;
    }
    if (!now->stats.has_errors()) {
      v.passed = false;
      v.text += fmt::format("  {}: recorded MAE {:.4f} %, but no case was simulated: FAILED\n",
                            label, *recorded.mae_pct);
      return;
    }
    const double mae = 100.0 * now->stats.mae;
    const double limit = *recorded.mae_pct + guard.tolerance_pct_points;
    const bool ok = mae <= limit;
    v.passed = v.passed && ok;
    v.text += fmt::format(
        "  {}: MAE {:.4f} % (recorded {:.4f} %, limit {:.4f} %), bias {:.4f} % (recorded {}), "
        "{} simulated (recorded {}): {}\n",
        label, mae, *recorded.mae_pct, limit, 100.0 * now->stats.bias,
        recorded.bias_pct ? fmt::format("{:.4f} %", *recorded.bias_pct) : "-", now->stats.simulated,
        recorded.simulated, ok ? "ok" : "FAILED");
  };
  compare("overall", guard.overall, find_group(groups, GroupScope::kOverall, "overall"));
  for (const auto& [name, entry] : guard.sources) {
    compare("source " + name, entry, find_group(groups, GroupScope::kSource, name));
  }
  for (const GroupStats& g : groups) {
    if (g.scope == GroupScope::kSource && !guard.sources.contains(g.name)) {
      v.text += fmt::format("  source {}: not in the guard: not guarded\n", g.name);
    }
  }
  std::string head = fmt::format(
      "guard {} (recorded at commit {}, tolerance {} percentage "
      "points): {}\n",
      guard.path, guard.recorded_at_commit, guard.tolerance_pct_points,
      v.passed ? "passed" : "FAILED");
  v.text = head + v.text;
  if (!v.passed) {
    v.text +=
        "The step-time error grew past the recorded value. Find the change that did it; if it is "
        "meant (a mechanism that is right but moves these cases), re-record with "
        "scripts/validation/record_guard.sh and say why in the commit message.\n";
  }
  return v;
}

}  // namespace parasim::validation
