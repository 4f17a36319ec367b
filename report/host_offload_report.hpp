#pragma once
// parasim::strat host offload report — with optimizer offload (costmodel/offload_cost.hpp), the
// host side of one step: host memory per GPU and per node against the node's, and the bytes and
// busy time of each GPU's host link. Absent (std::nullopt) without offload, so the reports of
// scenarios without it are unchanged.

#include <optional>

#include "sim/engine.hpp"
#include "strategies/input/scenario.hpp"
#include "strategies/workload/workload_builder.hpp"

namespace parasim::strat {

struct HostOffloadReport {
  double host_bytes_per_gpu = 0;   // the largest over the simulated devices
  double host_bytes_per_node = 0;  // host_bytes_per_gpu x GPUs per node (a node's ranks alike)
  double host_capacity_bytes = 0;  // cluster.host.memory
  bool fits_in_host = true;        // host_bytes_per_node <= host_capacity_bytes
  double d2h_bytes_per_gpu = 0;    // per step, the first simulated device's link
  double h2d_bytes_per_gpu = 0;
  double link_bytes_per_s = 0;  // the host link's rate per direction
};

std::optional<HostOffloadReport> host_offload_report(const Scenario& scenario,
                                                     const BuiltWorkload& built,
                                                     const sim::SimResult& r, double per_step);

}  // namespace parasim::strat
