#pragma once
// A small subset of the shipped development set (scenarios/validation/*.json) for the tests of
// `parasim validate-against`: a few cases of each file, written to a folder in the same format,
// so that the tests run on the real mapping and cannot rot when it changes.

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "../support/test_support.hpp"

namespace parasim::test {

// Case ids per development file: single- and multi-node vTrain runs (one with pipeline
// stages), a data-parallel and a pipelined Megatron-LM run, Zero Bubble cases with uneven stages
// (1F1B and the searched ZB-2p) and two interleaved ones (1F1B-I: a chunk per layer, the first
// and the last chunk Megatron's no-op layer).
inline const std::map<std::string, std::set<std::string>>& subset_ids() {
  static const std::map<std::string, std::set<std::string>> ids = {
      {"vtrain",
       {"single_dev_0001", "single_dev_0002", "single_dev_1440", "multi_0000", "multi_0012"}},
      {"megatron2021-table1", {"t1_1.7B", "t1_39.1B"}},
      {"zerobubble-main",
       {"main_1.5B_m24_1F1B", "main_1.5B_m24_ZB-2p", "main_1.5B_m24_1F1B-I", "main_1.5B_m32_1F1B-I"}},
  };
  return ids;
}

// Writes DIR/<name>.json for every development file, keeping only the subset's cases, and the
// profile a file names (its "profile", relative to the file) at the same place under DIR.
inline void write_subset(const fs::path& dir) {
  for (const auto& [name, ids] : subset_ids()) {
    const fs::path source = kSourceDir / "scenarios" / "validation" / (name + ".json");
    nlohmann::json doc = parse_json(read_text(source), source.string());
    nlohmann::json kept = nlohmann::json::array();
    for (const auto& c : doc.at("cases")) {
      if (ids.contains(c.at("id").get<std::string>())) kept.push_back(c);
    }
    REQUIRE_MESSAGE(kept.size() == ids.size(), source.string() << " lacks a subset case");
    doc["cases"] = kept;
    write_text(dir / (name + ".json"), doc.dump(1));
    if (doc.contains("profile")) {
      const fs::path profile = doc.at("profile").get<std::string>();
      fs::create_directories((dir / profile).parent_path());
      fs::copy_file(source.parent_path() / profile, dir / profile,
                    fs::copy_options::overwrite_existing);
    }
  }
}

}  // namespace parasim::test
