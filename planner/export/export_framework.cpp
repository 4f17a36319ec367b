// training.framework in every export (export_common.hpp): what the simulated framework is to
// the target trainer.
#include <fmt/format.h>

#include "planner/export/export_common.hpp"

namespace parasim::exporter {
namespace {

// The preset that models the target's own trainer, to suggest when the scenario's differs.
const char* preset_of(Target t) {
  switch (t) {
    case Target::kMegatron:
      return "megatron-lm";
    case Target::kDeepSpeed:
      return "deepspeed";
    case Target::kTorchtitan:
      return "torchtitan";
    case Target::kShampoo:
      return "";
  }
  return "";
}

// Whether the preset models the target's trainer (at some version: presets name the code they
// model, which is rarely the export's version).
bool same_family(const std::string& name, Target t) {
  switch (t) {
    case Target::kMegatron:
      return name == "megatron-lm" || name == "megatron-lm-2021";
    case Target::kDeepSpeed:
      // deepspeed-2021's ZeRO-3 is that era's code, not a configuration: the export notes it.
      return name == "deepspeed" || name == "megatron-deepspeed";
    case Target::kTorchtitan:
      return name == "torchtitan";
    case Target::kShampoo:
      return false;
  }
  return false;
}

}  // namespace

void cover_framework(const strat::Scenario& s, ExportContext& c, Target target) {
  const auto& f = s.training.framework;
  const std::string modelled = fmt::format("{} ({})", f.name, f.version);
  std::string note;
  if (target == Target::kShampoo) {
    note = fmt::format("the step was simulated with the framework {}; the optimizer's constructor "
                       "does not depend on it",
                       modelled);
  } else if (same_family(f.name, target)) {
    note = fmt::format("the step was simulated for the framework {}: {}'s host loop at the "
                       "version that preset models, not necessarily {}",
                       modelled, target_name(target), c.target_label());
  } else {
    note = fmt::format("the step was simulated for the framework {}, not {}: its host costs, "
                       "syncs and reduction policy are that framework's; simulate with "
                       "\"training\": {{\"framework\": \"{}\"}} to cost this export's trainer",
                       modelled, c.target_label(), preset_of(target));
  }
  c.stated("/training/framework/name", note);
  c.not_trainer("/training/framework/preset", "resolved into /training/framework's fields");
  c.not_trainer("/training/framework/version", "metadata: the code the framework preset models");
  const std::string cost =
      "cost model: host work, syncs and kernel counts of the framework's own code";
  for (const char* path : {"/training/framework/host", "/training/framework/layer",
                           "/training/framework/micro_batch", "/training/framework/step",
                           "/training/framework/fusions",
                           "/training/framework/pipeline_transfers",
                           "/training/framework/kernels"}) {
    c.not_trainer(path, cost);
  }
  if (target == Target::kShampoo) {
    c.not_trainer("/training/framework/compile", "the optimizer's constructor does not depend on it");
  } else if (target != Target::kTorchtitan && f.compile.enabled) {  // torchtitan's writes it
    c.cannot("/training/framework/compile", "torch.compile of torchtitan's blocks",
             "torchtitan ([compile] enable)", "eager kernels");
  } else if (target != Target::kTorchtitan) {
    c.unused("/training/framework/compile", "eager: nothing to write");
  }
  const bool deepspeed_zero3 = target == Target::kDeepSpeed && s.parallel.zero_stage == 3 &&
                              f.zero3.unit == strat::Zero3Gather::kPerModule;
  if (!deepspeed_zero3) {  // DeepSpeed's ZeRO-3 settings are written by its export
    c.not_trainer("/training/framework/zero3",
                  "cost model: how the framework's ZeRO-3 gathers a layer's weights (the trainer "
                  "gathers its own way: DeepSpeed per submodule, FSDP per wrapped unit)");
  }
}

void cover_framework_reduction(const strat::Scenario& s, ExportContext& c,
                               const std::string& detail) {
  for (const char* path :
       {"/training/framework/gradient_reduction", "/training/framework/gradient_bucket",
        "/training/framework/gradient_bucket_elements"}) {
    if (s.replicas() > 1) {
      c.mapped(path, detail);
    } else {
      c.unused(path, "no data-parallel replicas");
    }
  }
}

void cover_cuda_graphs_eager_target(const strat::Scenario& s, ExportContext& c) {
  if (s.training.framework.cuda_graphs) {
    c.cannot("/training/framework/cuda_graphs",
             "CUDA graphs replaying each pipeline item with one launch",
             "torchtitan 0.3 (the forward and backward of a micro-batch as one graph, without "
             "a pipeline)",
             "eager kernel launches");
  } else {
    c.mapped("/training/framework/cuda_graphs", "eager kernel launches (the trainer's default)");
  }
}

}  // namespace parasim::exporter
