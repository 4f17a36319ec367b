#pragma once
// parasim::exporter TP communication overlap — parallel.tp_comm_overlap in every export
// (docs/tp-overlap.md, "Exports"):
//
//   megatron    userbuffers: --tp-comm-overlap (megatron-core 0.19.2 arguments; with no
//               --tp-comm-overlap-cfg, Transformer Engine's initialize_ub defaults, the methods
//               parasim simulates); async-tp refused (torch's AsyncTP is not Megatron's).
//   torchtitan  async-tp: 0.3.0 compile.enable_async_tensor_parallel, 0.2.2
//               parallelism.enable_async_tensor_parallel, each with compile.enable = true, which
//               both versions require for it (0.3.0 CompileConfig.__post_init__; 0.2.2
//               distributed/tensor_parallel.py maybe_enable_async_tp), components left at their
//               default ["model", "loss"]; userbuffers refused (Transformer Engine's).
//   deepspeed   refused: neither overlap (its AutoTP has no sequence parallelism to chunk).
//   shampoo     an optimizer constructor: /parallel is not its business.

#include <string>

#include "planner/export/export_common.hpp"
#include "planner/export/torchtitan_settings.hpp"

namespace parasim::exporter {

void map_tp_overlap_megatron(const strat::Scenario& s, ExportContext& c, ArgList& a);
void map_tp_overlap_torchtitan(const strat::Scenario& s, ExportContext& c, Settings& out,
                               const std::string& version);
void map_tp_overlap_deepspeed(const strat::Scenario& s, ExportContext& c);

}  // namespace parasim::exporter
