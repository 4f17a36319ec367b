#pragma once
// parasim::exporter Shampoo — the optimizer of a shampoo or dash scenario as its constructor
// call: a Python snippet (default) or JSON (--json: {"class", "kwargs"} objects, nested for the
// config objects; string values are Python expressions such as "torch.float32").
//
// shampoo: DistributedShampoo of facebookresearch/optimizers at f60660661194
//   (distributed_shampoo/distributed_shampoo.py __init__; configs in shampoo_types.py and
//   preconditioner/matrix_functions_types.py): max_preconditioner_dim, precondition_frequency,
//   RootInvShampooPreconditionerConfig with EigenConfig or CoupledNewtonConfig, Adam grafting
//   (AdamPreconditionerConfig), DDPDistributedConfig over the data-parallel ranks.
// dash: DashLayerwise / DashGpu with DashConfig of IST-DASLab/ISTA-DASLab-Optimizers at
//   4c98e6e7d8a5 (ista_daslab_optimizers/dash/dash_config.py), as DASH's src/main.py builds them.
// The rest of the scenario is not an optimizer setting (--to megatron, deepspeed or torchtitan).
// Refused: an AdamW scenario; Newton-DB, Chebyshev, power-iteration scaling and fp16/bf16
// solver matmuls in Distributed Shampoo (DASH has them); dash without stacking (that is
// Distributed Shampoo); data parallelism beside tp, pp or cp (both distributors spread blocks
// over the whole world); ZeRO sharding (parasim costs the DDP distributor).

#include "planner/export/export_context.hpp"
#include "planner/export/rendered.hpp"
#include "strategies/input/scenario.hpp"

namespace parasim::exporter {

Rendered write_shampoo(const strat::Scenario& s, const ExportOptions& o, ExportContext& c);

}  // namespace parasim::exporter
