// Optimizer offload to host memory (Ren et al. 2021, ZeRO-Offload, arXiv 2101.06840;
// Rajbhandari et al. 2021, ZeRO-Infinity, arXiv 2104.07857): one entry per trainer's mechanism,
// the model in costmodel/offload_cost.hpp, docs/offload.md.
#include <fmt/format.h>

#include "strategies/registry/kind_lists.hpp"

namespace parasim::strat {
namespace {

using cost::OffloadFlavour;

bool offloads(const Scenario& s, OffloadFlavour f) {
  return s.parallel.offload.flavour == f;
}

// The host figures the model reads: a preset without a published host needs them given.
void host_known(const Scenario& s, cost::Diagnostics& d) {
  const auto& h = s.cluster.host;
  if (!(h.memory.value > 0)) {
    d.add("/cluster/host_memory", fmt::format("offload needs the host memory per node; preset "
                                              "'{}' does not publish it (give e.g. \"2 TB\")",
                                              s.cluster.name));
  }
  if (!(h.memory_bandwidth.bytes_per_s > 0)) {
    d.add("/cluster/host_memory_bandwidth",
          "offload needs the host's DRAM bandwidth per node for the CPU optimizer step (give "
          "e.g. \"409.6 GB/s\")");
  }
  if (!(h.link_bandwidth.bytes_per_s > 0)) {
    d.add("/cluster/host_link",
          "offload needs each GPU's host link (pcie-gen4-x16, pcie-gen5-x16, nvlink-c2c, or "
          "cluster.host_link_bandwidth)");
  }
}

void mixed_precision_adamw(const Scenario& s, cost::Diagnostics& d) {
  if (s.training.precision == cost::Dtype::kFp32) {
    d.add("/training/precision",
          "offload is modelled for mixed precision (bf16 or fp16): the "
          "fp32 master state is what moves to the host");
  }
  if (s.optimizer.kind != OptimizerKind::kAdamW) {
    d.add("/optimizer/name",
          fmt::format("offload steps AdamW on the CPU (got {})", optimizer_name(s.optimizer.kind)));
  }
}

void deepspeed_stage(const Scenario& s, cost::Diagnostics& d) {
  const int z = s.parallel.zero_stage;
  if (s.parallel.offload.params && z != 3) {
    d.add("/parallel/offload_params",
          fmt::format("parameter offload (offload_param) needs zero_stage 3 (got {})", z));
  } else if (z == 3 && !s.parallel.offload.params) {
    // stage3.py without offload_param keeps the 16-bit partition on the GPU and copies it back
    // after the CPU step: that path is not built.
    d.add("/parallel/offload_params",
          "ZeRO-3's optimizer offload is modelled with its parameters offloaded too "
          "(ZeRO-Infinity's offload_param: set offload_params true)");
  } else if (z != 2 && z != 3) {
    d.add("/parallel/zero_stage",
          fmt::format("ZeRO-Offload is modelled with zero_stage 2, as the ZeRO-Offload paper and "
                      "stage_1_and_2.py's offload path run it, or 3 with offload_params (got {})",
                      z));
  }
  if (!s.parallel.offload.pin_memory) {
    d.add("/parallel/offload_pin_memory",
          "pageable host buffers are not modelled: the host link rate is a pinned copy's");
  }
  if (s.training.fp32_gradients) {
    // bf16 with grad_accum_dtype fp32 takes _use_compact_grad_partition_buffer
    // (stage_1_and_2.py L1259-1266, L2145-2160 @0.19.8): an fp32 partition buffer on the GPU,
    // one copy to the host at the boundary, not the per-micro-batch host accumulation modelled.
    d.add("/training/grad_precision",
          "ZeRO-Offload with fp32 gradient accumulation (DeepSpeed's compact fp32 gradient "
          "partition on the GPU) is not modelled: use grad_precision bf16");
  }
}

void megatron_distributed_optimizer(const Scenario& s, cost::Diagnostics& d) {
  if (s.parallel.zero_stage != 1) {
    d.add("/parallel/zero_stage",
          fmt::format("Megatron's --optimizer-cpu-offload runs under its distributed optimizer "
                      "(zero_stage 1; got {})",
                      s.parallel.zero_stage));
  }
  // validate_args (megatron/training/arguments.py:1808-1811, megatron-core 0.19.2).
  if (s.training.fp8.param_gather && s.training.fp8.recipe != cost::QuantRecipe::kDelayed) {
    d.add("/training/fp8/param_gather", "Megatron's optimizer offload with --fp8-param-gather "
                                        "needs the delayed FP8 recipe");
  }
  const double f = s.parallel.offload.fraction;
  if (!(f > 0 && f <= 1)) {
    d.add("/parallel/offload_fraction", fmt::format("expected a fraction in (0, 1] (got {})", f));
  }
}

// FSDP2's CPUOffloadPolicy is a policy of fully_shard: the FSDP2 sharding mode. With gradient
// accumulation outside pipelining, every reduction after the step's first copies its shard to
// the host synchronously and adds it on the CPU inside the backward's hook (foreach_reduce,
// non_blocking only when nothing accumulates, _fsdp_collectives.py L797-820, torch 2.15): that
// blocking path is not built.
void fsdp2_mode(const Scenario& s, cost::Diagnostics& d) {
  if (!s.parallel.fsdp2.enabled) {
    d.add("/parallel/offload",
          "offload \"fsdp2\" is FSDP2's CPUOffloadPolicy: it needs parallel.sharding \"fsdp2\"");
    return;
  }
  if (s.parallel.pp == 1 && s.micro_batches() > 1) {
    d.add("/parallel/offload",
          fmt::format("FSDP2's CPU offload with gradient accumulation ({} micro-batches without "
                      "pipelining: a blocking gradient copy and a CPU add per reduction) is not "
                      "modelled; use one micro-batch per step (global_batch = micro_batch x dp)",
                      s.micro_batches()));
  }
}

// Parameters that only one flavour takes.
void fraction_megatron_only(const Scenario& s, cost::Diagnostics& d) {
  if (!offloads(s, OffloadFlavour::kMegatron) && s.parallel.offload.fraction != 1.0) {
    d.add("/parallel/offload_fraction", "only parallel.offload \"megatron\" takes a fraction");
  }
}
void overlap_megatron_only(const Scenario& s, cost::Diagnostics& d) {
  if (!offloads(s, OffloadFlavour::kMegatron) && !s.parallel.offload.overlap) {
    d.add("/parallel/offload_overlap", "only parallel.offload \"megatron\" takes offload_overlap");
  }
}
void params_deepspeed_only(const Scenario& s, cost::Diagnostics& d) {
  if (!offloads(s, OffloadFlavour::kDeepSpeed) && s.parallel.offload.params) {
    d.add("/parallel/offload_params", "only parallel.offload \"deepspeed\" takes offload_params");
  }
}
void pin_deepspeed_only(const Scenario& s, cost::Diagnostics& d) {
  if (!offloads(s, OffloadFlavour::kDeepSpeed) && !s.parallel.offload.pin_memory) {
    d.add("/parallel/offload_pin_memory",
          "only parallel.offload \"deepspeed\" takes offload_pin_memory");
  }
}

ParameterSpec flag(const std::string& path, const std::string& meaning, Rule when_not_taken) {
  ParameterSpec p;
  p.path = path;
  p.default_value = path == "/parallel/offload_params" ? "false" : "true";
  p.range_text = "true or false";
  p.meaning = meaning;
  p.when_not_taken = when_not_taken;
  return p;
}

Entry entry(OffloadFlavour f, const std::string& description, const std::string& paper,
            std::vector<ParameterSpec> parameters, std::vector<Rule> rules) {
  Entry e;
  e.kind = EntryKind::kOffload;
  e.name = e.value = cost::offload_flavour_name(f);
  e.description = description;
  e.paper = paper;
  e.parameters = std::move(parameters);
  e.rules = std::move(rules);
  e.builder = f == OffloadFlavour::kNone
                  ? "data_parallel_emission.cpp (the GPU step)"
                  : "offload_emission.cpp (host link copies, the CPU step); offload_cost.hpp";
  e.traits = OffloadTraits{.flavour = f};
  return e;
}

}  // namespace

std::vector<Entry> offload_entries() {
  ParameterSpec fraction;
  fraction.path = "/parallel/offload_fraction";
  fraction.default_value = "1";
  fraction.range_text = "above 0 to 1";
  fraction.meaning =
      "Megatron's --optimizer-offload-fraction: share of the optimizer shard on "
      "the CPU";
  fraction.when_not_taken = fraction_megatron_only;
  const std::string offload_paper = "Ren et al. 2021, ZeRO-Offload, arXiv 2101.06840";
  return {
      entry(OffloadFlavour::kNone, "no offload: the optimizer state and its step on the GPU",
            "Rajbhandari et al. 2020, ZeRO, arXiv 1910.02054", {}, {}),
      entry(
          OffloadFlavour::kDeepSpeed,
          "DeepSpeed ZeRO-Offload: the rank's fp32 partition and its gradients in host memory, "
          "gradients copied to the host after each bucket's reduce-scatter, DeepSpeedCPUAdam, "
          "16-bit weights copied back before the all-gather",
          offload_paper,
          {flag("/parallel/offload_pin_memory", "offload_optimizer.pin_memory", pin_deepspeed_only),
           flag("/parallel/offload_params",
                "offload_param (ZeRO-3 / ZeRO-Infinity: the 16-bit partition in host memory, "
                "copied in before each gather)",
                params_deepspeed_only)},
          {host_known, mixed_precision_adamw, deepspeed_stage}),
      entry(
          OffloadFlavour::kMegatron,
          "Megatron-core's --optimizer-cpu-offload: a fraction of the distributed optimizer's "
          "shard stepped by torch AdamW on the CPU, its gradients and parameters copied "
          "(overlapped per parameter with --overlap-cpu-optimizer-d2h-h2d)",
          "megatron-core 0.19.2, megatron/core/optimizer/cpu_offloading/hybrid_optimizer.py (2025)",
          {fraction, flag("/parallel/offload_overlap", "--overlap-cpu-optimizer-d2h-h2d",
                          overlap_megatron_only)},
          {host_known, mixed_precision_adamw, megatron_distributed_optimizer}),
      entry(OffloadFlavour::kFsdp2,
            "FSDP2's CPUOffloadPolicy: parameters, gradients and optimizer state of the shard on "
            "the CPU; each unit's shard copied to the GPU before its all-gather, its reduced "
            "gradient back, torch's AdamW on the CPU (needs the FSDP2 sharding mode)",
            "Zhao et al. 2023, PyTorch FSDP, arXiv 2304.11277", {},
            {host_known, mixed_precision_adamw, fsdp2_mode}),
  };
}

}  // namespace parasim::strat
