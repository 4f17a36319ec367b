#pragma once
// parasim::cost collective fabric — what NCCL finds on a cluster's links, beyond the datasheet
// bandwidths of hardware.hpp: the share of each link that NCCL's kernels achieve on large
// messages (published nccl-tests runs), and the facts about the machine that NCCL's tuning model
// reads (GPU generation, host CPU vendor, channel count, NVLink SHARP, LL128). The NCCL model
// (nccl_model.hpp) turns these into the algorithm, protocol, latency and bandwidth of every
// collective. Presets carry published figures (collective_fabric.cpp, each with its source); a
// cluster written out by hand gets the defaults below, the lowest published figures.
//
// Units: efficiencies are fractions of the link bandwidth of hardware.hpp (per GPU, per
// direction); nccl-tests' bus bandwidth (busbw) of a large ring collective over the link class
// divided by that link's bandwidth.

#include <string_view>

#include "sim/time.hpp"

namespace parasim::cost {

// The rows of NCCL's per-architecture tables (tuning.cc compCapIndex: sm70, sm80, sm90 and up).
enum class NcclGpuArch { kVolta, kAmpere, kHopper };
// The host CPU vendor NCCL reads for its multi-node LL caps and network post overhead.
enum class HostCpuVendor { kIntel, kAmd };

// Defaults: the lowest published achieved shares at hand (A100 NVSwitch, HDR InfiniBand; see
// collective_fabric.cpp), so that an uncharacterised cluster is not predicted faster than the
// hardware NCCL has been measured on.
inline constexpr double kDefaultIntraNodeEfficiency = 235.65 / 300.0;
inline constexpr double kDefaultInterNodeEfficiency = 23.94 / 25.0;

struct CollectiveFabric {
  // Achieved share of intra_node.bandwidth (NVLink) by NCCL's Simple ring on large messages.
  // Invariant: in (0, 1].
  double intra_node_efficiency = kDefaultIntraNodeEfficiency;
  // Achieved share of inter_node.bandwidth (one NIC per GPU). Invariant: in (0, 1].
  double inter_node_efficiency = kDefaultInterNodeEfficiency;
  NcclGpuArch arch = NcclGpuArch::kAmpere;
  HostCpuVendor cpu = HostCpuVendor::kIntel;
  // Channels (rings) NCCL's topology search builds inside one node (graph.nChannels, before the
  // runtime doubles them). Between nodes NCCL runs one channel per NIC, i.e. per GPU of the group
  // on each node (nccl_model.hpp). Invariant: >= 1.
  int intra_node_channels = 12;
  // NVLink SHARP (NVSwitch multicast, Hopper and later): NCCL's NVLS all-reduce inside a node.
  bool nvls = false;
  // nccl-tests busbw of an NVLS all-reduce over a full node of 8, as a share of
  // intra_node.bandwidth (may exceed 1: the switch reduces). Used only when nvls.
  double nvls_allreduce_busbw_share = 0.0;
  // NCCL enables LL128 by default only on NVLink with the NIC close to the GPU (tuning.cc).
  bool ll128 = true;
  // The network plugin's extra latency per inter-node hop (graph->latencyInter; InfiniBand
  // reports 0, AWS EFA 20 us). Added once per NET hop, twice for Simple (NCCL's "flush").
  sim::Time net_plugin_latency;
  // True when the figures above are published measurements of this hardware (presets), false
  // for the defaults.
  bool published = false;
};

// The fabric of the cluster preset named `preset_name` (cluster_presets.hpp), with sources; the
// defaults for any other name.
CollectiveFabric preset_collective_fabric(std::string_view preset_name);

}  // namespace parasim::cost
