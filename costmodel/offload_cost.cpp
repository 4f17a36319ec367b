#include "costmodel/offload_cost.hpp"

#include <algorithm>

namespace parasim::cost {

const char* offload_flavour_name(OffloadFlavour f) {
  switch (f) {
    case OffloadFlavour::kNone:
      return "none";
    case OffloadFlavour::kDeepSpeed:
      return "deepspeed";
    case OffloadFlavour::kMegatron:
      return "megatron";
    case OffloadFlavour::kFsdp2:
      return "fsdp2";
  }
  return "none";
}

double offloaded_parameters(const OffloadSpec& spec, double shard) {
  if (!spec.enabled()) return 0;
  return spec.flavour == OffloadFlavour::kMegatron ? shard * spec.fraction : shard;
}

OffloadMemory offload_memory(const OffloadSpec& spec, const ModelStateBytes& gpu_only,
                             double shard) {
  OffloadMemory m{gpu_only, Bytes{0}};
  const double p = offloaded_parameters(spec, shard);
  switch (spec.flavour) {
    case OffloadFlavour::kNone:
      break;
    case OffloadFlavour::kDeepSpeed:
      // Master weights, momentum, variance (12 B) and the fp32 gradient partition (4 B) on the
      // host, with the 16-bit pinned copy-back buffer (2 B; ZeRO-3: the pinned 16-bit gradient
      // partition buffer, stage3.py grad_partitions_flat_buffer); the GPU's gradient partition
      // goes. offload_param: the 16-bit parameter partition too (2 B).
      m.hbm.optimizer = Bytes{0};
      m.hbm.gradients = Bytes{0};
      m.host = Bytes{p * (12 + 4 + 2)};
      if (spec.params) {
        m.hbm.weights = Bytes{0};
        m.host += Bytes{p * 2};
      }
      break;
    case OffloadFlavour::kMegatron:
      // Momentum and variance of the offloaded part leave (8 B); the fp32 main parameter stays.
      m.hbm.optimizer = Bytes{std::max(0.0, gpu_only.optimizer.value - p * 8)};
      m.host = Bytes{p * 16};
      break;
    case OffloadFlavour::kFsdp2:
      // Everything of the shard on the CPU: fp32 parameters (the sharded originals), fp32
      // gradients, AdamW's momentum and variance.
      m.hbm = ModelStateBytes{};
      m.host = Bytes{p * 16};
      break;
  }
  return m;
}

HostLinkBytes offload_link_bytes(const OffloadSpec& spec, double shard, int micro_batches,
                                 double grad_bytes) {
  const double p = offloaded_parameters(spec, shard);
  const double m = micro_batches;
  switch (spec.flavour) {
    case OffloadFlavour::kDeepSpeed:
      // ZeRO-3 with offload_param: every micro-batch's 16-bit partition round trip, then the
      // fp32 copy; the step writes the 16-bit partition in host memory (nothing back).
      if (spec.params) return {Bytes{m * grad_bytes * p + 4 * p}, Bytes{m * grad_bytes * p}};
      if (micro_batches <= 1) return {Bytes{4 * p}, Bytes{2 * p}};
      return {Bytes{m * grad_bytes * p + 4 * p}, Bytes{(m - 1) * grad_bytes * p + 2 * p}};
    case OffloadFlavour::kMegatron:
      return {Bytes{4 * p}, Bytes{4 * p}};
    case OffloadFlavour::kFsdp2:
    case OffloadFlavour::kNone:
      break;
  }
  return {Bytes{0}, Bytes{0}};
}

double cpu_step_bytes_per_parameter(const OffloadSpec& spec) {
  switch (spec.flavour) {
    case OffloadFlavour::kDeepSpeed:
      return kDeepSpeedCpuAdamBytes;
    case OffloadFlavour::kFsdp2:
      return kTorchFusedCpuAdamWBytes;
    default:
      return kTorchCpuAdamWBytes;
  }
}

sim::Time cpu_optimizer_time(const OffloadSpec& spec, double parameters, double node_bandwidth,
                             int ranks_per_node) {
  if (!spec.enabled() || parameters <= 0) return sim::Time::zero();
  const double share = node_bandwidth / std::max(1, ranks_per_node);
  return sim::Time::seconds(parameters * cpu_step_bytes_per_parameter(spec) / share);
}

sim::Time offload_step_time(const OffloadSpec& spec, double shard, double link_bandwidth,
                            double node_bandwidth, int ranks_per_node) {
  if (!spec.enabled() || !(link_bandwidth > 0)) return sim::Time::zero();
  const HostLinkBytes b = offload_link_bytes(spec, shard, 1, 2);  // the boundary's copies
  const double d2h = b.d2h.value / link_bandwidth;
  const double h2d = b.h2d.value / link_bandwidth;
  const double cpu =
      cpu_optimizer_time(spec, offloaded_parameters(spec, shard), node_bandwidth, ranks_per_node)
          .to_seconds();
  const bool pipelined = spec.flavour == OffloadFlavour::kMegatron && spec.overlap;
  return sim::Time::seconds(pipelined ? std::max({d2h, cpu, h2d}) : d2h + cpu + h2d);
}

}  // namespace parasim::cost
