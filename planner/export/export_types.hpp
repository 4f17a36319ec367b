#pragma once
// parasim::exporter types — what `parasim export` is asked for and what it hands back.
//
// A target is a trainer (or an optimizer library) at one version: every key an export writes is
// one that version's own source accepts (scripts/export/keys/, extracted from the packages), and
// docs/export.md tables what each scenario field becomes.

#include <string>
#include <vector>

namespace parasim::exporter {

enum class Target { kMegatron, kDeepSpeed, kTorchtitan, kShampoo };
constexpr Target kAllTargets[] = {Target::kMegatron, Target::kDeepSpeed, Target::kTorchtitan,
                                  Target::kShampoo};
// "megatron", "deepspeed", "torchtitan", "shampoo".
const char* target_name(Target t);
bool target_from_name(const std::string& name, Target* out);

struct ExportOptions {
  Target target = Target::kMegatron;
  std::string version;             // empty: the target's default (target_versions.hpp)
  bool json = false;               // a JSON form where the target's default is text
  bool allow_approximate = false;  // write the closest configuration, listing the differences
};

// How an export used one scenario field (a JSON Pointer into the scenario, or a folder of them
// such as "/cluster/device"): the ledger that a test checks against every key of
// docs/scenario.schema.json, so that no field is ever dropped without a word.
enum class FieldUse {
  kMapped,        // written as a key of the target
  kStated,        // the target takes it from code or the launcher: said in a note
  kNotTrainer,    // hardware or cost-model figure, or metadata: no trainer setting exists
  kUnused,        // has no effect in this scenario (a PACI mode without PACI, ...)
  kApproximated,  // the target cannot express it; the closest was written (or it was refused)
};
const char* field_use_name(FieldUse u);

struct FieldRecord {
  std::string path;
  FieldUse use = FieldUse::kMapped;
  std::string detail;  // the key written, the note, or why
};

// A setting the target cannot express: refused (exit 2) unless --allow-approximate.
struct Difference {
  std::string path;          // "/parallel/schedule"
  std::string feature;       // "the gpipe schedule"
  std::string supported_by;  // "torchtitan 0.3 (GPipe)"; "no export target" when none
  std::string closest;       // what --allow-approximate writes instead
};

struct ExportResult {
  std::string text;                     // the configuration, as written to the output
  std::string target_label;             // "megatron-core 0.19.2"
  std::vector<std::string> notes;       // what the target takes from code or the launcher
  std::vector<Difference> differences;  // empty unless --allow-approximate
  std::vector<FieldRecord> ledger;      // every field the export looked at
};

}  // namespace parasim::exporter
