#include "planner/export/tp_overlap_export.hpp"

namespace parasim::exporter {
namespace {

using strat::TpCommOverlap;

constexpr const char* kPath = "/parallel/tp_comm_overlap";

}  // namespace

void map_tp_overlap_megatron(const strat::Scenario& s, ExportContext& c, ArgList& a) {
  switch (s.parallel.tp_comm_overlap) {
    case TpCommOverlap::kNone:
      c.mapped(kPath, "off (no --tp-comm-overlap)");
      return;
    case TpCommOverlap::kUserbuffers:
      a.add("--tp-comm-overlap");
      c.mapped(kPath,
               "--tp-comm-overlap (no --tp-comm-overlap-cfg: Transformer Engine's default "
               "methods, num_sm and num_splits)");
      return;
    case TpCommOverlap::kAsyncTp:
      c.cannot(kPath, "torch's AsyncTP (async-tp)", "torchtitan",
               "no TP overlap (no --tp-comm-overlap)");
      return;
  }
}

void map_tp_overlap_torchtitan(const strat::Scenario& s, ExportContext& c, Settings& out,
                               const std::string& version) {
  switch (s.parallel.tp_comm_overlap) {
    case TpCommOverlap::kNone:
      c.mapped(kPath, "off (enable_async_tensor_parallel false)");
      return;
    case TpCommOverlap::kAsyncTp: {
      const char* section = version == "0.2.2" ? "parallelism" : "compile";
      out.set(section, "enable_async_tensor_parallel", true);
      out.set("compile", "enable", true);
      c.mapped(kPath, std::string(section) + ".enable_async_tensor_parallel with compile.enable");
      if (!s.training.framework.compile.compiles_blocks()) {  // Megatron's layer, simulated eager
        c.note(
            "AsyncTP runs only under torch.compile (torchtitan refuses it otherwise), so the "
            "export turns compile.enable on; parasim simulated the scenario's eager kernels with "
            "AsyncTP's chunked collectives, not Inductor's (docs/tp-overlap.md)");
      }
      return;
    }
    case TpCommOverlap::kUserbuffers:
      c.cannot(kPath, "Transformer Engine's userbuffers (--tp-comm-overlap)", "megatron",
               "no TP overlap (enable_async_tensor_parallel false)");
      return;
  }
}

void map_tp_overlap_deepspeed(const strat::Scenario& s, ExportContext& c) {
  if (s.parallel.tp_comm_overlap == TpCommOverlap::kNone) {
    c.mapped(kPath, "off");
    return;
  }
  c.cannot(kPath, "overlap of sequence-parallel collectives with GEMMs",
           s.parallel.tp_comm_overlap == TpCommOverlap::kAsyncTp ? "torchtitan" : "megatron",
           "none");
}

}  // namespace parasim::exporter
