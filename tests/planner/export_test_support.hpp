#pragma once
// Helpers of the export suite: the inputs every export is tested on (the shipped scenarios and
// the hand-written plan), one export of them, the key lists of scripts/export/keys and a reader
// of argument lists.

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../support/test_support.hpp"
#include "costmodel/diagnostics.hpp"
#include "planner/export/exporter.hpp"

namespace parasim::test {

struct ExportCase {
  std::string name;     // "llama2-7b-dgx-h100" (file stem)
  std::string display;  // "scenarios/llama2-7b-dgx-h100.json", as in messages
  fs::path path;
};

inline std::vector<ExportCase> export_cases() {
  std::vector<ExportCase> cases;
  for (const fs::path& p : json_files_in(kSourceDir / "scenarios")) {
    cases.push_back({p.stem().string(), "scenarios/" + p.filename().string(), p});
  }
  const fs::path plan = kSourceDir / "tests/data/plan-llama2-7b.json";
  cases.push_back({"plan-llama2-7b", "tests/data/plan-llama2-7b.json", plan});
  // A planner output as `parasim plan scenarios/llama2-70b-64gpu.json --out FILE` wrote it.
  const fs::path planned = kSourceDir / "tests/data/plan-llama2-70b-64gpu.json";
  cases.push_back({"plan-llama2-70b-64gpu", "tests/data/plan-llama2-70b-64gpu.json", planned});
  return cases;
}

inline exporter::ExportInput input_of(const ExportCase& c) {
  return exporter::parse_export_input(read_text(c.path), c.display);
}

// Every (target, version) pair: torchtitan twice.
struct TargetCase {
  exporter::Target target;
  std::string version;  // "" for the default
  std::string tag;      // file-name part: "megatron", "torchtitan-0.2"
};
inline std::vector<TargetCase> target_cases() {
  using exporter::Target;
  return {{Target::kMegatron, "", "megatron"},
          {Target::kDeepSpeed, "", "deepspeed"},
          {Target::kTorchtitan, "", "torchtitan"},
          {Target::kTorchtitan, "0.2", "torchtitan-0.2"},
          {Target::kShampoo, "", "shampoo"}};
}

// The export, or the problems' text when it is refused.
struct Outcome {
  std::optional<exporter::ExportResult> result;
  std::string refusal;
};
inline Outcome run_export(const exporter::ExportInput& in, const TargetCase& t, bool approximate,
                          bool json = false) {
  exporter::ExportOptions o;
  o.target = t.target;
  o.version = t.version;
  o.allow_approximate = approximate;
  o.json = json;
  try {
    return {exporter::export_scenario(in, o), ""};
  } catch (const cost::InputError& e) {
    return {std::nullopt, e.what()};
  }
}

// A key list of scripts/export/keys (comment lines skipped).
inline std::set<std::string> key_list(const std::string& file) {
  std::set<std::string> keys;
  std::istringstream lines(read_text(kSourceDir / "scripts/export/keys" / file));
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line[0] != '#') keys.insert(line);
  }
  return keys;
}

// "--flag value" lines (header `#` lines skipped) as flag -> value ("" for a flag alone).
inline std::vector<std::pair<std::string, std::string>> arg_lines(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> args;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.find(' ');
    args.emplace_back(line.substr(0, space),
                      space == std::string::npos ? "" : line.substr(space + 1));
  }
  return args;
}

inline std::string arg_value(const std::vector<std::pair<std::string, std::string>>& args,
                             const std::string& flag) {
  for (const auto& [f, v] : args) {
    if (f == flag) return v;
  }
  return "";
}

// Strips a header of `//` or `#` comment lines.
inline std::string without_comments(const std::string& text) {
  std::istringstream lines(text);
  std::string line, out;
  while (std::getline(lines, line)) {
    if (line.rfind("//", 0) == 0 || line.rfind("#", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

}  // namespace parasim::test
