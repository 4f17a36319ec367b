#include "planner/export/recompute_export.hpp"

#include "strategies/layers/checkpoint_groups.hpp"

namespace parasim::exporter {

void map_recompute_groups(const strat::Scenario& s, ExportContext& c, const std::string& per_layer,
                          const std::string& why) {
  const char* method = "/training/recompute_method";
  const char* layers = "/training/recompute_num_layers";
  const strat::TrainingSpec& t = s.training;
  if (t.recompute != cost::Recompute::kFull) {
    c.unused(method, "read with \"recompute\": \"full\" only");
    c.unused(layers, "read with \"recompute\": \"full\" only");
    return;
  }
  if (!strat::grouped_recompute(t)) {
    c.mapped(method, per_layer);
    c.mapped(layers, per_layer);
    return;
  }
  const char* supported = "megatron (--recompute-method, --recompute-num-layers)";
  if (t.recompute_method == cost::RecomputeMethod::kEveryNth) {
    c.cannot(method,
             "torchtitan 0.2.2's every-N-th block checkpointed (selective_ac_option N; " + why +
                 ")",
             "torchtitan 0.2 (activation_checkpoint selective_ac_option N)", per_layer);
    c.part_of_refused(layers, "every-nth's N (refused at /training/recompute_method)");
  } else if (t.recompute_method == cost::RecomputeMethod::kBlock) {
    c.cannot(method,
             "Megatron's block recompute (only the first layers of each stage "
             "checkpointed; " +
                 why + ")",
             supported, per_layer);
    c.part_of_refused(layers, "block's layer count (refused at /training/recompute_method)");
  } else {
    c.cannot(layers,
             "Megatron's uniform groups of several layers under one checkpoint (" + why + ")",
             supported, per_layer);
    c.mapped(method, per_layer);
  }
}

}  // namespace parasim::exporter
