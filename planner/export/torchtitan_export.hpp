#pragma once
// parasim::exporter torchtitan — a scenario as torchtitan 0.3.0's command-line overrides of
// ConfigManager (torchtitan/config/manager.py: `--module M --config F` then `--section.field
// value`; sections from config/configs.py and trainer.py Trainer.Config; the activation
// checkpoint a tyro subcommand, distributed/activation_checkpoint.py), one per line or a JSON
// list with --json; with --version 0.2 the TOML job file of torchtitan 0.2.2
// (config/job_config.py, --job.config_file). Both check torchtitan's batch rule
// (trainer.py: global % (local x dp_replicate x dp_shard) == 0).
//
// torchtitan builds Llama-architecture models whose shape lives in code (0.3: a config_registry
// function; 0.2: a flavor of the model registry): the shape is said in a note. Refused: GELU,
// LayerNorm, linear biases, learned positions, dropout (Llama 3's architecture has none of
// them), unfused attention (SDPA), fp16, bf16 gradients (mixed_precision_reduce is float32 only),
// ZeRO-1/2 (FSDP2 has ZeRO-3's sharding only), Korthikanti's selective recompute (torchtitan's
// selective AC is per-op), the zero-bubble schedules it lacks (zb-h1/h2, zb-1p/2p; it writes
// interleaved-zb, zb-v and dualpipev as InterleavedZeroBubble, ZBVZeroBubble, DualPipeV) and
// asynchronous schedules, Shampoo/DASH.

#include "planner/export/export_context.hpp"
#include "planner/export/rendered.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::exporter {

// `version` "0.3.0" or "0.2.2" (target_versions.hpp).
Rendered write_torchtitan(const strat::Scenario& s, const ExportOptions& o,
                          const std::string& version, ExportContext& c);

}  // namespace parasim::exporter
