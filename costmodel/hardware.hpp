#pragma once
// parasim::cost hardware description: one accelerator and the cluster it sits in.
//
// All rates are per direction and per GPU: `intra_node.bandwidth` is what one GPU can push to its
// node peers at once (NVLink/Infinity Fabric, e.g. 450 GB/s on H100), `inter_node.bandwidth` is the
// NIC bandwidth per GPU (e.g. 400 Gb/s = 50 GB/s for ConnectX-7 NDR). Figures in presets are
// datasheet figures (see cluster_presets.cpp for sources); what fraction of them kernels reach is
// the device's KernelEfficiency (kernel_efficiency.hpp), measured for presets.

#include <optional>
#include <string>
#include <string_view>

#include "costmodel/collective_fabric.hpp"
#include "costmodel/host_system.hpp"
#include "costmodel/kernel_efficiency.hpp"
#include "costmodel/precision/architecture.hpp"
#include "costmodel/units.hpp"
#include "sim/time.hpp"

namespace parasim::cost {

enum class Dtype { kFp32, kTf32, kBf16, kFp16, kFp8 };

// Bytes per element of a dtype (fp32 4, tf32 4, bf16/fp16 2, fp8 1).
constexpr double bytes_per_element(Dtype d) {
  switch (d) {
    case Dtype::kFp32: case Dtype::kTf32: return 4;
    case Dtype::kBf16: case Dtype::kFp16: return 2;
    case Dtype::kFp8: return 1;
  }
  return 4;
}
const char* dtype_name(Dtype d);
// The Dtype whose dtype_name() is `name`; std::nullopt for any other text.
std::optional<Dtype> parse_dtype(std::string_view name);

struct DeviceSpec {
  std::string name;            // "H100-SXM5-80GB"
  FlopRate peak_fp32;          // dense, no sparsity
  FlopRate peak_tf32;
  FlopRate peak_bf16;
  FlopRate peak_fp16;
  FlopRate peak_fp8;           // zero where unsupported; MXFP8 runs at this rate on every preset
  // Dense block-scaled FP4 (NVFP4 on Blackwell, MXFP4 on CDNA 4) tensor peak; zero where
  // unsupported. Not a Dtype of the cost model yet: carried for the presets and reports.
  FlopRate peak_fp4;
  Bytes hbm_capacity;
  Bandwidth hbm_bandwidth;
  sim::Time kernel_launch_overhead;  // per kernel, host launch plus GPU dispatch
  int sm_count = 0;            // for wave quantization in the GEMM efficiency model
  // The SM (engine) clock the peaks above are quoted at, MHz: the datasheet's boost clock, or the
  // clock that the peak implies (cores x FLOP/clock x clock), each preset saying which. 0: not
  // known, so a scenario's device.clock_mhz cannot scale the peaks (device_clock.hpp).
  double peak_clock_mhz = 0;
  // Board power the peaks are quoted at (TDP / TBP), watts; 0: not known.
  double tdp_watts = 0;
  // A scenario's device.power_limit, watts; 0: none (the device runs at tdp_watts). Its clock is
  // not modelled: the scenario gives clock_mhz or the peaks (device_clock.hpp).
  double power_limit_watts = 0;
  // A scenario's device.clock_mhz, MHz, after the peaks were scaled to it; 0: peak_clock_mhz.
  double clock_mhz = 0;
  // Which FP8/FP4 recipes run and whether FP8 operands need transposes (architecture.hpp).
  Architecture architecture = Architecture::kUnknown;
  // Fractions of the peaks above that kernels reach. Default: conservative, uncalibrated.
  KernelEfficiency kernels = conservative_kernel_efficiency();

  FlopRate peak(Dtype d) const;
};

struct LinkSpec {
  Bandwidth bandwidth;         // per GPU, per direction
  sim::Time latency;           // per message, one hop
  // Fully connected mesh without a switch (MI300X Infinity Fabric, Perlmutter's NVLink3): what a
  // GPU can push to any ONE peer, per direction; a GPU then reaches min(bandwidth, peers x
  // peer_bandwidth) with the peers it talks to (collective_cost.hpp). Zero: switched (NVSwitch),
  // one peer can take the whole bandwidth. Invariant: 0 <= peer_bandwidth <= bandwidth.
  Bandwidth peer_bandwidth{};
};

// A rail-optimised two-tier fat tree between the nodes (fat_tree.hpp has the model). Invariant:
// nodes_per_leaf >= 0, oversubscription >= 1.
struct FatTree {
  int nodes_per_leaf = 0;       // L, nodes under one leaf switch per rail; 0: a full-bisection
                                // network, no spine modelled
  double oversubscription = 1;  // R: a leaf's downlink over its uplink capacity; 1: non-blocking

  bool enabled() const { return nodes_per_leaf > 0; }
  bool operator==(const FatTree&) const = default;
};

struct ClusterSpec {
  std::string name;            // preset name or "custom"
  DeviceSpec device;
  int gpus_per_node = 8;
  int nodes = 1;
  LinkSpec intra_node;         // NVLink / Infinity Fabric
  LinkSpec inter_node;         // NIC per GPU (InfiniBand / RoCE / Slingshot)
  // Rails-only fabric (no spine): a NIC reaches only the NICs of the same local index on other
  // nodes. Collectives' inter-node phases already pair same-index GPUs; point-to-point hops
  // between nodes must then stay on a rail too (checked by the scenario parser).
  bool rails_only = false;
  // GPUs one host drives (a launcher's processes per node: torchrun --nproc-per-node); 0: the
  // whole node. A "node" here is the NVLink domain the link classes follow: a GB200 NVL72 rack is
  // one node of 72 GPUs on 18 hosts of 4. Invariant: 0, or it divides gpus_per_node.
  int gpus_per_host = 0;
  // What NCCL achieves on these links and reads of the machine (collective_fabric.hpp).
  CollectiveFabric fabric;
  // The network between the nodes: by default full bisection (every NIC at its bandwidth).
  FatTree network;
  // Host memory per node and each GPU's host link (host_system.hpp): what optimizer offload uses.
  HostSpec host;

  int total_gpus() const { return gpus_per_node * nodes; }
  int host_gpus() const { return gpus_per_host > 0 ? gpus_per_host : gpus_per_node; }
  int hosts() const { return total_gpus() / host_gpus(); }
};

}  // namespace parasim::cost
