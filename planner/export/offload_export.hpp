#pragma once
// parasim::exporter optimizer offload — parallel.offload and its parameters, and the cluster's
// host figures, in every export (docs/offload.md, "Exports"):
//
//   deepspeed   zero_optimization.offload_optimizer {"device": "cpu", "pin_memory": ...}, with
//               offload_params zero_optimization.offload_param {"device": "cpu", "pin_memory": ...}
//               (DeepSpeed 0.19.8's DeepSpeedZeroOffloadOptimizerConfig; keys in
//               scripts/export/keys/deepspeed-0.19.8.txt); Megatron's fractional offload refused.
//   megatron    --optimizer-cpu-offload (with --use-precision-aware-optimizer, which
//               validate_args requires), --optimizer-offload-fraction F,
//               --overlap-cpu-optimizer-d2h-h2d (megatron-core 0.19.2 arguments); DeepSpeed's
//               refused (the whole shard at ZeRO-2 is not Megatron's layout).
//   torchtitan  training.enable_cpu_offload (FSDP2's CPUOffloadPolicy) for offload "fsdp2";
//               the others refused (torchtitan has no other offload).
//   shampoo     an optimizer constructor: /parallel is not its business.
// The host figures are hardware: no trainer setting.

#include <nlohmann/json.hpp>

#include "planner/export/export_common.hpp"

namespace parasim::exporter {

// /cluster/host_*: hardware, on every target.
void cover_host_system(ExportContext& c);
// Without offload: every offload key recorded unused, true; with it: false, nothing recorded.
bool covered_without_offload(const strat::Scenario& s, ExportContext& c);
void map_offload_deepspeed(const strat::Scenario& s, ExportContext& c,
                           nlohmann::ordered_json& zero_optimization);
void map_offload_megatron(const strat::Scenario& s, ExportContext& c, ArgList& a);
// True: the caller sets training.enable_cpu_offload.
bool map_offload_torchtitan(const strat::Scenario& s, ExportContext& c);

}  // namespace parasim::exporter
