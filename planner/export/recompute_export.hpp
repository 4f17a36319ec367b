#pragma once
// parasim::exporter Megatron's grouped full recompute (training.recompute_method and
// recompute_num_layers; strategies/layers/checkpoint_groups.hpp) in the targets that checkpoint
// each layer on its own. Megatron's writer maps both fields itself (megatron_export.cpp).
//
//   torchtitan  0.3.0's `full` (torchtitan/distributed/activation_checkpoint.py, apply_ac) wraps
//               every transformer block in its own checkpoint: Megatron's uniform 1; there is no
//               every-N or block option (0.2.2's selective_ac_option N checkpoints every N-th
//               block whole and keeps the others' activations, which is neither method).
//   deepspeed   the checkpoints are the model code's (deepspeed.checkpointing.checkpoint per
//               layer, or PipelineModule's activation_checkpoint_interval): no config key.
// every-nth (torchtitan 0.2.2's selective_ac_option N) is refused here too; torchtitan's writer
// maps it itself for 0.2.2 (torchtitan_export.cpp).

#include <string>

#include "planner/export/export_common.hpp"

namespace parasim::exporter {

// Records both fields: mapped to `per_layer` with full recompute in groups of one layer, unused
// without full recompute, refused (the closest: `per_layer`, every layer its own checkpoint)
// with block or groups of several layers; `why` says what the target lacks.
void map_recompute_groups(const strat::Scenario& s, ExportContext& c, const std::string& per_layer,
                          const std::string& why);

}  // namespace parasim::exporter
