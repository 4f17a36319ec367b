// Every flag, key and field an export writes is one the trainer's own source accepts: the lists
// of scripts/export/keys, extracted from the packages by scripts/export/extract_keys.py (each
// names its source files and version at the top).
#include <doctest/doctest.h>

#include "export_test_support.hpp"

using namespace parasim::test;
using nlohmann::json;
using parasim::exporter::Target;

namespace {

std::string list_file(const TargetCase& t, bool dash) {
  switch (t.target) {
    case Target::kMegatron:
      return "megatron-core-0.19.2.txt";
    case Target::kDeepSpeed:
      return "deepspeed-0.19.8.txt";
    case Target::kTorchtitan:
      return t.version == "0.2" ? "torchtitan-0.2.2.txt" : "torchtitan-0.3.0.txt";
    case Target::kShampoo:
      return dash ? "dash-4c98e6e7d8a5.txt" : "distributed-shampoo-f60660661194.txt";
  }
  return "";
}

void json_paths(const json& j, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [k, v] : j.items()) {
    const std::string path = prefix.empty() ? k : prefix + "." + k;
    out.push_back(path);
    if (v.is_object() && path != "optimizer.params") json_paths(v, path, out);
  }
}

void shampoo_keys(const json& call, std::vector<std::string>& out) {
  const std::string cls = call["class"];
  out.push_back(cls);
  for (const auto& [k, v] : call["kwargs"].items()) {
    out.push_back(cls + "." + k);
    if (v.is_object()) shampoo_keys(v, out);
    if (v.is_string() && v.get<std::string>().rfind("Dash", 0) == 0) out.push_back(v);
  }
}

// The keys of one export's text, in the form of the lists.
std::vector<std::string> emitted_keys(const TargetCase& t, const std::string& text) {
  std::vector<std::string> keys;
  switch (t.target) {
    case Target::kMegatron:
      for (const auto& [flag, value] : arg_lines(text)) keys.push_back(flag);
      break;
    case Target::kDeepSpeed:
      json_paths(json::parse(without_comments(text)), "", keys);
      break;
    case Target::kTorchtitan:
      if (t.version == "0.2") {
        json_paths(json::parse(text), "", keys);
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
    case Target::kShampoo:
      shampoo_keys(json::parse(text)["optimizer"], keys);
      break;
  }
  return keys;
}

std::vector<std::string> unknown_keys(const std::vector<std::string>& keys,
                                      const std::set<std::string>& list) {
  std::vector<std::string> unknown;
  for (const std::string& k : keys) {
    if (list.count(k) == 0) unknown.push_back(k);
  }
  return unknown;
}

}  // namespace

TEST_CASE("the key lists name their source and version, and hold the keys parasim relies on") {
  for (const char* file :
       {"megatron-core-0.19.2.txt", "deepspeed-0.19.8.txt", "torchtitan-0.3.0.txt",
        "torchtitan-0.2.2.txt", "distributed-shampoo-f60660661194.txt", "dash-4c98e6e7d8a5.txt"}) {
    const std::string text = read_text(kSourceDir / "scripts/export/keys" / file);
    CHECK_MESSAGE(text.rfind("# ", 0) == 0, file);
    CHECK_MESSAGE(text.find("Extracted by scripts/export/extract_keys.py") != std::string::npos,
                  file);
    CHECK_MESSAGE(key_list(file).size() > 50, file);
  }
  // megatron-core 0.19.2 dropped the flag (arguments.py excludes the field): a list read from
  // the source knows it, so an export writing it fails below.
  CHECK(key_list("megatron-core-0.19.2.txt").count("--virtual-pipeline-model-parallel-size") == 0);
  CHECK(key_list("megatron-core-0.19.2.txt").count("--num-layers-per-virtual-pipeline-stage") == 1);
}

TEST_CASE("an emitted key missing from the list is caught") {
  const TargetCase megatron{Target::kMegatron, "", "megatron"};
  const auto keys = emitted_keys(megatron,
                                 "--tensor-model-parallel-size 2\n"
                                 "--virtual-pipeline-model-parallel-size 2\n");
  const auto unknown = unknown_keys(keys, key_list("megatron-core-0.19.2.txt"));
  REQUIRE(unknown.size() == 1);
  CHECK(unknown[0] == "--virtual-pipeline-model-parallel-size");
}

TEST_CASE("every key of every export is in the trainer's list") {
  int checked = 0;
  for (const ExportCase& c : export_cases()) {
    const auto in = input_of(c);
    const bool dash = in.scenario.optimizer.kind == parasim::strat::OptimizerKind::kDash;
    for (const TargetCase& t : target_cases()) {
      CAPTURE(c.display);
      CAPTURE(t.tag);
      // Approximate, so that every input yields the configuration it would write; JSON forms
      // for the TOML and Shampoo targets (the same settings as their text).
      const bool as_json = t.target == Target::kShampoo || t.version == "0.2";
      const Outcome o = run_export(in, t, true, as_json);
      REQUIRE(o.result);
      const auto keys = emitted_keys(t, o.result->text);
      CHECK(!keys.empty());
      const auto unknown = unknown_keys(keys, key_list(list_file(t, dash)));
      for (const std::string& k : unknown) CHECK_MESSAGE(false, "unknown key " << k);
      checked += static_cast<int>(keys.size());
    }
  }
  CHECK(checked > 1000);
}
