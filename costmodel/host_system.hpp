#pragma once
// parasim::cost host system — the CPU side of a node that optimizer offload uses: its memory,
// that memory's bandwidth (what a CPU optimizer step streams through), and each GPU's link to it.
//
// Units: `memory` bytes per node, `memory_bandwidth` bytes/s per node (all sockets, DRAM peak),
// `link_bandwidth` bytes/s per GPU and per direction (host-to-device and device-to-host each have
// this rate; a copy engine per direction), `link_latency` per copy. Zero means "not known": a
// scenario that offloads on such a cluster must give the figure (scenario_rules).
//
// Host link kinds (host_link_presets(), sources in host_system.cpp): PCIe Gen4 x16, PCIe Gen5
// x16 (raw rate x the transaction-layer payload efficiency of 256-byte packets) and NVLink-C2C
// (Grace Hopper / Grace Blackwell, datasheet rate). Per-preset host figures:
// preset_host_system().

#include <string>
#include <string_view>
#include <vector>

#include "costmodel/units.hpp"
#include "sim/time.hpp"

namespace parasim::cost {

struct HostSpec {
  Bytes memory{};                // per node; 0: not known
  Bandwidth memory_bandwidth{};  // per node, DRAM peak over all sockets; 0: not known
  std::string link;              // a host_link_presets() name, "custom", or "" (not known)
  Bandwidth link_bandwidth{};    // per GPU, per direction; 0: not known
  sim::Time link_latency = sim::Time::us(10);  // per copy [assumption: cudaMemcpyAsync setup]
  bool operator==(const HostSpec&) const = default;
};

struct HostLinkPreset {
  std::string name;     // "pcie-gen4-x16"
  Bandwidth bandwidth;  // per GPU, per direction, achievable
  std::string source;   // how the figure is derived
};

// The host link kinds a scenario may name (cluster.host_link), in a fixed order.
const std::vector<HostLinkPreset>& host_link_presets();
// The link kind `name`, or nullptr.
const HostLinkPreset* find_host_link(std::string_view name);
// The host figures of cluster preset `preset_name` (datasheets, host_system.cpp); all zero for a
// preset whose host is not published (HGX boards, whose vendor chooses the CPUs and memory).
HostSpec preset_host_system(std::string_view preset_name);
// One copy of `bytes` over a GPU's host link with nothing else on it: link_latency + bytes /
// link_bandwidth, what the workload builder's copy (a transfer on the link) takes alone; the
// planner's screen prices offload copies with it. Zero bandwidth: zero.
sim::Time host_copy_time(const HostSpec& host, double bytes);

}  // namespace parasim::cost
