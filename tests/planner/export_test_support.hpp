#pragma once
// Helpers of the export suite: the inputs every export is tested on (the shipped scenarios and
// the hand-written plan), one export of them, the key lists of scripts/export/keys and a reader
// of argument lists.

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "../support/test_support.hpp"
#include "costmodel/diagnostics.hpp"
#include "planner/export/exporter.hpp"

#include <nlohmann/json.hpp>

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
  // The same plan with FSDP2, as plan --for torchtitan picks it.
  const fs::path fsdp2 = kSourceDir / "tests/data/plan-llama2-7b-fsdp2.json";
  cases.push_back({"plan-llama2-7b-fsdp2", "tests/data/plan-llama2-7b-fsdp2.json", fsdp2});
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

// The key list of a target (dash: the DASH library for the shampoo target).

inline std::string list_file(const TargetCase& t, bool dash) {
  switch (t.target) {
    case exporter::Target::kMegatron:
      return "megatron-core-0.19.2.txt";
    case exporter::Target::kDeepSpeed:
      return "deepspeed-0.19.8.txt";
    case exporter::Target::kTorchtitan:
      return t.version == "0.2" ? "torchtitan-0.2.2.txt" : "torchtitan-0.3.0.txt";
    case exporter::Target::kShampoo:
      return dash ? "dash-4c98e6e7d8a5.txt" : "distributed-shampoo-f60660661194.txt";
  }
  return "";
}

inline void json_paths(const nlohmann::json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [k, v] : j.items()) {
    const std::string path = prefix.empty() ? k : prefix + "." + k;
    out.push_back(path);
    if (v.is_object() && path != "optimizer.params") json_paths(v, path, out);
  }
}

inline void shampoo_keys(const nlohmann::json& call, std::vector<std::string>& out) {
  const std::string cls = call["class"];
  out.push_back(cls);
  for (const auto& [k, v] : call["kwargs"].items()) {
    out.push_back(cls + "." + k);
    if (v.is_object()) shampoo_keys(v, out);
    if (v.is_string() && v.get<std::string>().rfind("Dash", 0) == 0) out.push_back(v);
  }
}

// The keys of one export's text, in the form of the lists.
inline std::vector<std::string> emitted_keys(const TargetCase& t, const std::string& text) {
  std::vector<std::string> keys;
  switch (t.target) {
    case exporter::Target::kMegatron:
      for (const auto& [flag, value] : arg_lines(text)) keys.push_back(flag);
      break;
    case exporter::Target::kDeepSpeed: {
      nlohmann::json j = nlohmann::json::parse(without_comments(text));
      j.erase("_parasim");  // parasim's own notes, a key DeepSpeed ignores (deepspeed_export.cpp)
      json_paths(j, "", keys);
      break;
    }
    case exporter::Target::kTorchtitan:
      if (t.version == "0.2") {
        json_paths(nlohmann::json::parse(text), "", keys);
        keys.erase(
            std::remove_if(keys.begin(), keys.end(),
                           [](const std::string& k) { return k.find('.') == std::string::npos; }),
            keys.end());
        break;
      }
      for (auto [flag, value] : arg_lines(text)) {
        if (flag.rfind("--", 0) != 0) {
          keys.push_back(flag);  // activation-checkpoint:MODE
          continue;
        }
        std::string key = flag.substr(2);
        const auto dot = key.find('.');
        if (key.compare(dot + 1, 3, "no-") == 0) key.erase(dot + 1, 3);
        for (char& ch : key) ch = ch == '-' ? '_' : ch;
        keys.push_back(key);
      }
      break;
    case exporter::Target::kShampoo:
      shampoo_keys(nlohmann::json::parse(text)["optimizer"], keys);
      break;
  }
  return keys;
}

inline std::vector<std::string> unknown_keys(const std::vector<std::string>& keys,
                                      const std::set<std::string>& list) {
  std::vector<std::string> unknown;
  for (const std::string& k : keys) {
    if (list.count(k) == 0) unknown.push_back(k);
  }
  return unknown;
}


}  // namespace parasim::test
