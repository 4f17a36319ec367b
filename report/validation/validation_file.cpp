#include "report/validation/validation_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "costmodel/diagnostics.hpp"
#include "costmodel/json_fields.hpp"
#include "strategies/input/scenario_parser.hpp"

namespace parasim::validation {
namespace {

namespace fs = std::filesystem;
using cost::Diagnostics;
using cost::JsonObjectReader;
using nlohmann::json;

constexpr int kFormatVersion = 1;
constexpr double kFromTolerance = 1e-9;  // relative, step_time_s against the published figure

std::optional<std::string> non_empty_string(JsonObjectReader& r, std::string_view key,
                                            bool required, Diagnostics& d) {
  auto s = r.string(key, required);
  if (s && s->empty()) {
    d.add(r.child_path(key), "expected a non-empty string");
    return std::nullopt;
  }
  return s;
}

// The unit a key names as one of its words (`iteration_ms`, `iteration_s_derived`,
// `memory_gb`): the factor to seconds or to bytes, 0 when it names none; a word after "per" is a
// rate's, not the key's unit ("samples_per_gpu_per_s" names no time).
double unit_of(const std::string& key, const std::vector<std::pair<std::string, double>>& units) {
  std::string previous;
  std::size_t start = 0;
  while (start <= key.size()) {
    const std::size_t end = std::min(key.find('_', start), key.size());
    const std::string word = key.substr(start, end - start);
    if (previous != "per") {
      for (const auto& [name, factor] : units) {
        if (word == name) return factor;
      }
    }
    previous = word;
    start = end + 1;
  }
  return 0;
}

const std::vector<std::pair<std::string, double>> kTimeUnits{{"s", 1.0}, {"ms", 1e-3}};
const std::vector<std::pair<std::string, double>> kMemoryUnits{
    {"gb", 1e9}, {"gib", 1073741824.0}, {"mb", 1e6}, {"mib", 1048576.0}, {"bytes", 1.0}};

// A measured figure (`value` in seconds or bytes, as the figure's `units` say) against the
// figure `from` names inside "published": `field` is measured's key the value came from, `kind`
// what it is (for messages).
struct MeasuredFigure {
  const char* field;    // "step_time_s"
  const char* kind;     // "a time"
  const char* example;  // "iteration_ms, iteration_s_derived"
  const char* unit;     // "s"
  const std::vector<std::pair<std::string, double>>* units;
};
const MeasuredFigure kStepTime{"step_time_s", "a time",
                               "_s or _ms (iteration_ms, iteration_s_derived)", "s", &kTimeUnits};
const MeasuredFigure kPeakMemory{"peak_memory_bytes", "an amount of memory",
                                 "_gb, _gib, _mb, _mib or _bytes (memory_gb)", "B", &kMemoryUnits};

void check_from(const std::string& from, double value, const MeasuredFigure& figure,
                const json* published, const std::string& path, Diagnostics& d) {
  if (published == nullptr) {
    d.add(path, "names a figure in \"published\", but the case has no \"published\" record");
    return;
  }
  if (from.empty() || from[0] != '/') {
    d.add(path, fmt::format("expected a JSON Pointer such as \"/measured/iteration_ms\", got "
                            "\"{}\"",
                            from));
    return;
  }
  const json* named = nullptr;
  try {
    const json::json_pointer pointer(from);
    if (published->contains(pointer)) named = &published->at(pointer);
  } catch (const json::exception&) {
    d.add(path, fmt::format("\"{}\" is not a valid JSON Pointer", from));
    return;
  }
  if (named == nullptr) {
    d.add(path, fmt::format("\"{}\" names nothing in the case's \"published\" record", from));
    return;
  }
  if (!named->is_number()) {
    d.add(path, fmt::format("\"{}\" in \"published\" is {}, expected a number", from,
                            cost::json_type_name(*named)));
    return;
  }
  const std::string key = from.substr(from.rfind('/') + 1);
  const double scale = unit_of(key, *figure.units);
  if (scale == 0) {
    d.add(path, fmt::format("the key \"{}\" does not say that it is {}: expected its unit as a "
                            "word of the name, {}",
                            key, figure.kind, figure.example));
    return;
  }
  const double converted = named->get<double>() * scale;
  if (!(std::abs(converted - value) <= kFromTolerance * std::abs(converted))) {
    d.add(path, fmt::format("\"{}\" in \"published\" is {} ({} {}), but measured.{} is {} {}",
                            from, named->dump(), converted, figure.unit, figure.field, value,
                            figure.unit));
  }
}

// The case's scenario through the scenario parser; its problems land under `path`.
std::optional<strat::Scenario> read_scenario(const json& node, const std::string& path,
                                             const std::string& file, const std::string& id,
                                             Diagnostics& d) {
  if (!node.is_object()) {
    d.add(path, "expected a scenario object, got " + cost::json_type_name(node));
    return std::nullopt;
  }
  try {
    strat::Scenario s = strat::parse_scenario(node.dump(), file);
    if (!node.contains("name")) s.name = id;
    return s;
  } catch (const cost::InputError& e) {
    for (const auto& p : e.diagnostics().problems()) {
      d.add(path + p.json_path, fmt::format("case \"{}\": scenario rejected: {}", id, p.message));
    }
    return std::nullopt;
  }
}

void read_case(const json& node, std::size_t index, const std::string& file,
               std::map<std::string, std::size_t>& ids, Diagnostics& d, ValidationFile& out) {
  const std::string path = fmt::format("/cases/{}", index);
  JsonObjectReader r(node, path, d);
  if (!r.valid()) return;
  ValidationCase c;
  c.index = index;
  if (auto id = non_empty_string(r, "id", true, d)) {
    c.id = *id;
    auto [it, fresh] = ids.emplace(*id, index);
    if (!fresh) {
      d.add(r.child_path("id"),
            fmt::format("duplicate case id \"{}\" (first at /cases/{})", *id, it->second));
    }
  }
  const std::string label = c.id.empty() ? path : c.id;
  if (auto f = non_empty_string(r, "family", true, d)) c.family = *f;
  const auto reason = non_empty_string(r, "not_expressible", false, d);
  const json* published = r.child("published", false);
  if (published != nullptr && !published->is_object()) {
    d.add(r.child_path("published"), "expected the source's record of the case (an object), got " +
                                         cost::json_type_name(*published));
    published = nullptr;
  }
  const bool not_expressible = r.has("not_expressible");
  if (const json* m = r.child("measured", !not_expressible)) {
    JsonObjectReader mr(*m, r.child_path("measured"), d);
    const auto t = mr.number("step_time_s", true, 0, 1e9);
    if (t && !(*t > 0)) {
      d.add(mr.child_path("step_time_s"), "expected a positive step time in seconds, got 0");
    } else if (t) {
      c.measured_step_time_s = *t;
    }
    if (auto from = mr.string("from", published != nullptr)) {
      c.measured_from = *from;
      if (c.measured_step_time_s) {
        check_from(*from, *c.measured_step_time_s, kStepTime, published, mr.child_path("from"),
                   d);
      }
    }
    const auto memory = mr.number("peak_memory_bytes", false, 0, 1e18);
    if (memory && !(*memory > 0)) {
      d.add(mr.child_path("peak_memory_bytes"), "expected a positive peak memory in bytes, got 0");
    } else if (memory) {
      c.measured_peak_memory_bytes = *memory;
    }
    if (auto from = mr.string("memory_from", memory.has_value() && published != nullptr)) {
      c.memory_from = *from;
      if (!memory) {
        d.add(mr.child_path("memory_from"), "names the figure of peak_memory_bytes, which is "
                                            "missing");
      } else if (c.measured_peak_memory_bytes) {
        check_from(*from, *c.measured_peak_memory_bytes, kPeakMemory, published,
                   mr.child_path("memory_from"), d);
      }
    }
    mr.finish();
  }
  const json* scenario = r.child("scenario", !not_expressible);
  if (not_expressible && scenario != nullptr) {
    d.add(r.child_path("scenario"),
          "a case is either simulated (a scenario) or not expressible (a reason), not both");
  } else if (scenario != nullptr) {
    c.scenario = read_scenario(*scenario, r.child_path("scenario"), file, label, d);
  }
  if (reason) c.not_expressible = *reason;
  r.finish();
  out.cases.push_back(std::move(c));
}

std::string stem_of(const std::string& path) {
  return fs::path(path).stem().string();
}

// Reads a whole file or reports why not; nullopt on failure.
std::optional<std::string> read_file(const std::string& path, const ValidationLimits& limits,
                                     Diagnostics& d) {
  return cost::read_input_file(path, limits.max_file_bytes, "validation", d);
}

// The file's "profile", resolved against the folder of the validation file at `path`; its
// problems are reported at /profile (nullptr then).
std::shared_ptr<const cost::Profile> read_profile(const std::string& value, const std::string& path,
                                                  Diagnostics& d) {
  const fs::path resolved = fs::path(path).parent_path() / value;
  try {
    return std::make_shared<const cost::Profile>(cost::load_profile(resolved.string()));
  } catch (const cost::InputError& e) {
    std::string problems;
    for (const auto& p : e.diagnostics().problems()) {
      problems += fmt::format("; {}: {}", p.json_path.empty() ? "/" : p.json_path, p.message);
    }
    d.add("/profile", fmt::format("the profile {} cannot be used{}", resolved.string(), problems));
  }
  return nullptr;
}

}  // namespace

ValidationFile parse_validation_file(std::string_view text, const std::string& path,
                                     const ValidationLimits& limits) {
  Diagnostics d(path);
  if (text.size() > limits.max_file_bytes) {
    d.add("", fmt::format("file is {} bytes, over the limit of {} bytes for a validation file",
                          text.size(), limits.max_file_bytes));
    throw cost::InputError(std::move(d));
  }
  const std::optional<json> document = cost::parse_json_document(text, d);
  if (!document) throw cost::InputError(std::move(d));
  const json& root = *document;
  ValidationFile out;
  out.path = path;
  out.name = stem_of(path);
  JsonObjectReader r(root, "", d);
  if (!r.valid()) throw cost::InputError(std::move(d));
  if (auto v = r.integer("parasim_validation", true, 0, 1 << 30); v && *v != kFormatVersion) {
    d.add("/parasim_validation",
          fmt::format("expected {} (the validation format this parasim reads), got {}",
                      kFormatVersion, *v));
  }
  if (auto s = non_empty_string(r, "source", true, d)) out.source = *s;
  if (auto s = r.string("license_note", false)) out.license_note = *s;
  if (auto s = r.string("mapping", false)) out.mapping = *s;
  if (auto s = non_empty_string(r, "profile", false, d)) {
    out.profile_path = *s;
    out.profile = read_profile(*s, path, d);
  }
  if (const json* cases = r.child("cases", true)) {
    if (!cases->is_array()) {
      d.add("/cases", "expected an array of cases, got " + cost::json_type_name(*cases));
    } else if (cases->empty()) {
      d.add("/cases", "expected at least one case");
    } else if (cases->size() > limits.max_cases) {
      d.add("/cases", fmt::format("{} cases, over the limit of {} cases per validation file",
                                  cases->size(), limits.max_cases));
    } else {
      std::map<std::string, std::size_t> ids;
      for (std::size_t i = 0; i < cases->size(); ++i) read_case((*cases)[i], i, path, ids, d, out);
    }
  }
  r.finish();
  if (!d.ok()) throw cost::InputError(std::move(d));
  return out;
}

std::vector<ValidationFile> load_validation_set(const std::string& file_or_folder,
                                                const ValidationLimits& limits) {
  std::error_code ec;
  std::vector<std::string> paths;
  const bool folder = fs::is_directory(file_or_folder, ec);
  if (folder) {
    for (const auto& entry : fs::directory_iterator(file_or_folder, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") {
        paths.push_back(entry.path().string());
      }
    }
    std::sort(paths.begin(), paths.end());
  } else {
    paths.push_back(file_or_folder);
  }
  std::string problems;
  if (paths.size() > limits.max_files) {
    throw ValidationInputError(
        fmt::format("{}: /: {} JSON files, over the limit of {} files in one validation folder\n",
                    file_or_folder, paths.size(), limits.max_files));
  }
  std::vector<ValidationFile> files;
  for (const std::string& path : paths) {
    try {
      Diagnostics d(path);
      const auto text = read_file(path, limits, d);
      if (!text) throw cost::InputError(std::move(d));
      if (folder) {  // skip JSON files that are not validation files (guard.json, ...)
        Diagnostics ignored(path);  // parse_validation_file reports what is wrong
        const std::optional<json> root = cost::parse_json_document(*text, ignored);
        if (root && root->is_object() && !root->contains("parasim_validation")) continue;
      }
      files.push_back(parse_validation_file(*text, path, limits));
    } catch (const cost::InputError& e) {
      problems += e.what();
    }
  }
  if (!problems.empty()) throw ValidationInputError(problems);
  if (files.empty()) {
    throw ValidationInputError(fmt::format(
        "{}: /: no validation file here (expected *.json files with \"parasim_validation\" at "
        "the top level; docs/validation.md)\n",
        file_or_folder));
  }
  return files;
}

}  // namespace parasim::validation
