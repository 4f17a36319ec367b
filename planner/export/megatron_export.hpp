#pragma once
// parasim::exporter Megatron-LM — a scenario as megatron-core 0.19.2's command-line arguments
// (megatron/training/arguments.py; most flags generated from the config dataclasses by
// megatron/training/argument_utils.py: "--" + field name with "-" for "_"), one per line for
// `torchrun ... pretrain_gpt.py $(cat FILE)`, or a JSON list with --json. The table of what each
// field becomes is in docs/export.md.
//
// Refused (exit 2 unless --allow-approximate): the gpipe schedule (Megatron-LM runs 1F1B),
// zero-bubble schedules (0.19.2 has none: core/pipeline_parallel/schedules.py offers 1F1B with and
// without interleaving), PipeDream, 2BW and PACI, Shampoo/DASH (0.19.2's --optimizer choices),
// and BOOST/TSP placements.

#include "planner/export/export_context.hpp"
#include "planner/export/rendered.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::exporter {

Rendered write_megatron(const strat::Scenario& s, const ExportOptions& o, ExportContext& c);

}  // namespace parasim::exporter
