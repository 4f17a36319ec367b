#include "planner/export/offload_export.hpp"

#include <fmt/format.h>

namespace parasim::exporter {
namespace {

using cost::OffloadFlavour;

constexpr const char* kParameters[] = {"/parallel/offload_fraction", "/parallel/offload_overlap",
                                       "/parallel/offload_pin_memory", "/parallel/offload_params"};

void parameters_unused(ExportContext& c, const char* why) {
  for (const char* p : kParameters) c.unused(p, why);
}

// Every offload key refused as part of /parallel/offload, which the caller refuses.
void parameters_refused(ExportContext& c) {
  for (const char* p : kParameters) c.part_of_refused(p, "part of the refused /parallel/offload");
}

}  // namespace

void cover_host_system(ExportContext& c) {
  const std::string hardware =
      "hardware that parasim costs (optimizer offload); no trainer "
      "setting";
  for (const char* p : {"/cluster/host_memory", "/cluster/host_memory_bandwidth",
                        "/cluster/host_link", "/cluster/host_link_bandwidth"}) {
    c.not_trainer(p, hardware);
  }
}

bool covered_without_offload(const strat::Scenario& s, ExportContext& c) {
  if (s.parallel.offload.enabled()) return false;
  c.mapped("/parallel/offload", "none (the optimizer on the GPU)");
  parameters_unused(c, "no optimizer offload");
  return true;
}

void map_offload_deepspeed(const strat::Scenario& s, ExportContext& c,
                           nlohmann::ordered_json& zero) {
  if (covered_without_offload(s, c)) return;
  const auto& off = s.parallel.offload;
  if (off.flavour != OffloadFlavour::kDeepSpeed) {
    c.cannot("/parallel/offload",
             fmt::format("{} optimizer offload", cost::offload_flavour_name(off.flavour)),
             off.flavour == OffloadFlavour::kMegatron ? "megatron"
                                                      : "torchtitan (training.enable_cpu_offload)",
             "no offload");
    parameters_refused(c);
    return;
  }
  zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", off.pin_memory}};
  c.mapped("/parallel/offload", "zero_optimization.offload_optimizer.device cpu");
  c.mapped("/parallel/offload_pin_memory", "zero_optimization.offload_optimizer.pin_memory");
  if (off.params) {
    // DeepSpeedZeroOffloadParamConfig (deepspeed/runtime/zero/offload_config.py): device and
    // pin_memory.
    zero["offload_param"] = {{"device", "cpu"}, {"pin_memory", off.pin_memory}};
    c.mapped("/parallel/offload_params", "zero_optimization.offload_param.device cpu");
  } else {
    c.mapped("/parallel/offload_params", "no zero_optimization.offload_param");
  }
  c.unused("/parallel/offload_fraction", "DeepSpeed offloads the whole partition");
  c.unused("/parallel/offload_overlap", "Megatron's setting");
}

void map_offload_megatron(const strat::Scenario& s, ExportContext& c, ArgList& a) {
  if (covered_without_offload(s, c)) return;
  const auto& off = s.parallel.offload;
  if (off.flavour != OffloadFlavour::kMegatron) {
    c.cannot("/parallel/offload",
             fmt::format("{} optimizer offload", cost::offload_flavour_name(off.flavour)),
             off.flavour == OffloadFlavour::kDeepSpeed ? "deepspeed"
                                                       : "torchtitan (training.enable_cpu_offload)",
             "no offload");
    parameters_refused(c);
    return;
  }
  a.add("--optimizer-cpu-offload");
  // validate_args (megatron/training/arguments.py:1803-1807, megatron-core 0.19.2): the hybrid
  // device optimizer runs on the precision-aware optimizer's code path. Its dtypes left at their
  // defaults (--main-grads-dtype, --main-params-dtype, --exp-avg(-sq)-dtype fp32: L3504-3516),
  // the state is the fp32 state offload_cost.hpp counts.
  a.add("--use-precision-aware-optimizer");
  a.add("--optimizer-offload-fraction", fmt::format("{}", off.fraction));
  if (off.overlap) a.add("--overlap-cpu-optimizer-d2h-h2d");
  c.mapped("/parallel/offload", "--optimizer-cpu-offload");
  c.mapped("/parallel/offload_fraction", "--optimizer-offload-fraction");
  c.mapped("/parallel/offload_overlap",
           off.overlap ? "--overlap-cpu-optimizer-d2h-h2d" : "no --overlap-cpu-optimizer-d2h-h2d");
  c.unused("/parallel/offload_pin_memory", "DeepSpeed's setting (Megatron pins its CPU copies)");
  c.unused("/parallel/offload_params", "DeepSpeed's setting");
}

bool map_offload_torchtitan(const strat::Scenario& s, ExportContext& c) {
  if (covered_without_offload(s, c)) return false;
  const OffloadFlavour f = s.parallel.offload.flavour;
  if (f != OffloadFlavour::kFsdp2) {
    c.cannot("/parallel/offload",
             fmt::format("{} optimizer offload (torchtitan offloads only through FSDP2's "
                         "CPUOffloadPolicy, training.enable_cpu_offload: offload \"fsdp2\")",
                         cost::offload_flavour_name(f)),
             f == OffloadFlavour::kDeepSpeed ? "deepspeed" : "megatron", "no offload");
    parameters_refused(c);
    return false;
  }
  // torchtitan/distributed/fsdp.py (0.3.0): cpu_offload -> offload_policy=CPUOffloadPolicy(),
  // whose pin_memory defaults to True (torch _fsdp_api.py L255), as parasim models it.
  c.mapped("/parallel/offload", "training.enable_cpu_offload (FSDP2's CPUOffloadPolicy)");
  parameters_unused(c, "FSDP2's CPUOffloadPolicy takes no such setting (pinned, whole shard)");
  return true;
}

}  // namespace parasim::exporter
