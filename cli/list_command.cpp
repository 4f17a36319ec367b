#include <fmt/format.h>

#include "cli/commands.hpp"
#include "costmodel/cluster_presets.hpp"
#include "costmodel/units.hpp"
#include "strategies/model_presets.hpp"

namespace parasim::cli {
namespace {

void list_presets(std::ostream& out) {
  out << "Model presets (scenario key \"model\")\n";
  for (const auto& p : strat::model_presets()) {
    const auto& m = p.spec;
    out << fmt::format("  {:<14} {:>7.2f} B params, {} layers, hidden {}, {} heads ({} kv), "
                       "ffn {}, vocab {}, seq {}\n",
                       p.name, static_cast<double>(m.total_params()) / 1e9, m.layers, m.hidden,
                       m.heads, m.kv_heads, m.ffn_hidden, m.vocab, m.seq_len);
    out << fmt::format("  {:<14} {}\n  {:<14} source: {}\n", "", p.description, "", p.source);
  }
  out << "\nCluster presets (scenario key \"cluster\"; figures are datasheet figures unless the "
         "source says assumption)\n";
  for (const auto& p : cost::cluster_presets()) {
    const auto& c = p.spec;
    out << fmt::format("  {:<16} {} x {} per node: {} bf16, {} HBM at {}, intra-node {} per GPU, "
                       "NIC {} per GPU\n",
                       p.name, c.gpus_per_node, c.device.name,
                       cost::format_flop_rate(c.device.peak_bf16),
                       cost::format_bytes(c.device.hbm_capacity),
                       cost::format_bandwidth(c.device.hbm_bandwidth),
                       cost::format_bandwidth(c.intra_node.bandwidth),
                       cost::format_bandwidth(c.inter_node.bandwidth));
    out << fmt::format("  {:<16} {}\n  {:<16} source: {}\n", "", p.description, "", p.source);
  }
}

void list_strategies(std::ostream& out) {
  out << "Parallel strategies (scenario key \"parallel\")\n"
         "  dp                data parallel, gradient all-reduce in buckets overlapped with the "
         "backward pass (Li et al. 2020, arXiv 2006.15704); param: dp, dp_bucket (default 25 MB)\n"
         "  zero_stage 1-3    ZeRO optimizer / gradient / parameter sharding (Rajbhandari et al. "
         "2020, arXiv 1910.02054)\n"
         "  tp                Megatron tensor parallel, 2 all-reduces forward and 2 backward per "
         "layer (Shoeybi et al. 2019, arXiv 1909.08053)\n"
         "  sequence_parallel Megatron SP: all-gather / reduce-scatter instead of all-reduce, "
         "activations sharded (Korthikanti et al. 2022, arXiv 2205.05198)\n"
         "  pp                pipeline parallel, layers split evenly, activations sent point to "
         "point\n"
         "\nPipeline schedules (parallel.schedule)\n"
         "  gpipe             all forwards then all backwards; bubble (P-1)/(m+P-1); m activation "
         "sets per stage (Huang et al. 2019, arXiv 1811.06965)\n"
         "  1f1b              one-forward-one-backward with flush; same bubble, at most P-s "
         "activation sets on stage s (Narayanan et al. 2021, arXiv 2104.04473)\n"
         "\nActivation recompute (training.recompute)\n"
         "  none, selective (attention core), full (whole layer) (Korthikanti et al. 2022)\n"
         "\nOptimizers (optimizer.name)\n"
         "  adamw             memory-bound step, fp32 master weights and two moments (30 bytes "
         "moved per parameter in mixed precision)\n";
}

}  // namespace

int run_list(const std::string& what, std::ostream& out, std::ostream& err) {
  if (what.empty() || what == "presets") list_presets(out);
  if (what.empty()) out << "\n";
  if (what.empty() || what == "strategies") list_strategies(out);
  if (!what.empty() && what != "presets" && what != "strategies") {
    err << "parasim list: unknown topic \"" << what << "\" (expected presets or strategies)\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace parasim::cli
