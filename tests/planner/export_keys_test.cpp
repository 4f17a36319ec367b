// Every flag, key and field an export writes is one the trainer's own source accepts: the lists
// of scripts/export/keys, extracted from the packages by scripts/export/extract_keys.py (each
// names its source files and version at the top).
#include <doctest/doctest.h>

#include "export_test_support.hpp"

using namespace parasim::test;
using nlohmann::json;
using parasim::exporter::Target;


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
