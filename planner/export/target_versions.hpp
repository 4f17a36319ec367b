#pragma once
// parasim::exporter target versions — the trainer versions each export was checked against
// (their sources read key by key: scripts/export/extract_keys.py, scripts/export/keys/).
//
//   megatron    megatron-core 0.19.2 (PyPI wheel; "0.19" names it)
//   deepspeed   DeepSpeed 0.19.8 (PyPI sdist; "0.19")
//   torchtitan  torchtitan 0.3.0 (PyPI wheel; "0.3"): command-line overrides of ConfigManager;
//               torchtitan 0.2.2 ("0.2"): the TOML job file of --job.config_file
//   shampoo     Distributed Shampoo, facebookresearch/optimizers at f60660661194 (2026-08-05);
//               DASH, IST-DASLab/ISTA-DASLab-Optimizers at 4c98e6e7d8a5 (2026-06-16), used when
//               the scenario's optimizer is dash

#include <string>
#include <vector>

#include "planner/export/export_types.hpp"

namespace parasim::exporter {

struct TargetVersion {
  Target target;
  std::string version;               // "0.19.2"
  std::string label;                 // "megatron-core 0.19.2", in headers and messages
  std::vector<std::string> aliases;  // what --version accepts for it
  bool is_default = false;
};

const std::vector<TargetVersion>& target_versions();

// The version `requested` names ("" for the default; for shampoo the library follows the
// scenario's optimizer, `dash` true for DASH). Throws std::invalid_argument naming the versions
// there are.
const TargetVersion& resolve_version(Target target, const std::string& requested, bool dash);

}  // namespace parasim::exporter
